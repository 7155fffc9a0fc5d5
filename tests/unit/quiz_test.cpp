#include "core/quiz.hpp"

#include "core/catalog.hpp"

#include <doctest/doctest.h>
#include <regex>
#include <sstream>

using namespace wb;

TEST_CASE("a quiz block parses into question, choices and why") {
  auto q = parse_quiz("question: Which roof holds it?\n"
                      "- [ ] compute -- it would need about 14 FLOPs per byte\n"
                      "- [x] memory\n"
                      "why: 1/8 FLOP per byte is far left\n"
                      "of the ridge.\n\nA second paragraph.\n");
  REQUIRE(q);
  CHECK(q->question == "Which roof holds it?");
  REQUIRE(q->choices.size() == 2);
  CHECK(q->choices[0].text == "compute");
  CHECK(q->choices[0].explanation == "it would need about 14 FLOPs per byte");
  CHECK_FALSE(q->choices[0].correct);
  CHECK(q->choices[1].correct);
  CHECK(q->why == "1/8 FLOP per byte is far left of the ridge.\n\nA second paragraph.");
  CHECK_FALSE(q->multi());
  CHECK(quiz_answer_right(*q, {false, true}));
  CHECK_FALSE(quiz_answer_right(*q, {true, true}));
}

TEST_CASE("malformed quizzes say what is wrong and where") {
  QuizError e;
  CHECK_FALSE(parse_quiz("- [x] a\n- [ ] b\nwhy: x", &e));
  CHECK(e.line == 1);
  CHECK_FALSE(parse_quiz("question: q\n- [x] only one\nwhy: x", &e));
  CHECK(e.message.find("two choices") != std::string::npos);
  CHECK_FALSE(parse_quiz("question: q\n- [ ] a\n- [ ] b\nwhy: x", &e));
  CHECK(e.message.find("right") != std::string::npos);
  CHECK_FALSE(parse_quiz("question: q\n- [x] a\n- [ ] b\n", &e));
  CHECK(e.message.find("why") != std::string::npos);
  CHECK_FALSE(parse_quiz("question: q\n* [x] a\n- [ ] b\nwhy: x", &e));
  CHECK(e.line == 2);
  CHECK_FALSE(parse_quiz("question: q\nquestion: again\n- [x] a\n- [ ] b\nwhy: x", &e));
  auto multi = parse_quiz("question: all?\n- [x] a\n- [X] b\n- [ ] c\nwhy: both");
  REQUIRE(multi);
  CHECK(multi->multi());
}

// docs/lessons.md: a malformed quiz is drawn as code with a warning, and a link to an id that is
// not in the catalog is a content bug. The loader checks only the front matter, so the built-in
// lessons' bodies are checked here: every ```quiz block parses, every puzzle:/lesson: link names
// an id in the catalog exactly, and every image is a PNG that exists under the catalog root.
TEST_CASE("every built-in lesson: quizzes parse, links and images resolve") {
  Catalog cat = load_catalog(WARPBOOK_SOURCE_ROOT);
  REQUIRE_FALSE(cat.lessons.empty());
  const std::regex link(R"(\]\((puzzle|lesson):([^)\s]+)\))");
  const std::regex image(R"(!\[[^\]]*\]\(([^)\s]+)\))");
  for (auto& l : cat.lessons) {
    std::istringstream in(l.body);
    std::string line, fence, quiz;
    int n = l.body_line - 1, quiz_line = 0, quizzes = 0;
    while (std::getline(in, line)) {
      ++n;
      if (fence.empty() && line.rfind("```", 0) == 0) {
        fence = line.substr(0, line.find_first_not_of('`'));
        if (line.substr(fence.size()) == "quiz") quiz_line = n, quiz.clear();
        continue;
      }
      if (!fence.empty()) {
        if (line.rfind(fence, 0) == 0 && line.find_first_not_of('`') == std::string::npos) {
          if (quiz_line) {
            QuizError e;
            CHECK_MESSAGE(parse_quiz(quiz, &e).has_value(),
                          l.file.string() << ":" << quiz_line + e.line << ": " << e.message);
            ++quizzes;
          }
          fence.clear();
          quiz_line = 0;
        } else if (quiz_line) {
          quiz += line + "\n";
        }
        continue;
      }
      for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
        std::string kind = (*it)[1], id = (*it)[2];
        bool found = kind == "puzzle" ? cat.find_puzzle(id) && cat.find_puzzle(id)->id == id
                                      : cat.find_lesson(id) && cat.find_lesson(id)->id == id;
        CHECK_MESSAGE(found, l.file.string() << ":" << n << ": no " << kind << " '" << id << "'");
      }
      for (std::sregex_iterator it(line.begin(), line.end(), image), end; it != end; ++it) {
        std::string src = (*it)[1];
        CHECK_MESSAGE(fs::exists(cat.root / src), l.file.string() << ":" << n << ": " << src);
        bool png = src.size() > 4 && src.substr(src.size() - 4) == ".png";
        CHECK_MESSAGE(png, l.file.string() << ":" << n << ": the GUI draws PNG: " << src);
      }
    }
    CHECK_MESSAGE(fence.empty(), l.file.string() << ": a code block is not closed");
    CHECK_MESSAGE(quizzes >= 1, l.file.string() << ": no quiz (docs/lessons.md asks for one)");
  }
}
