#include "core/quiz.hpp"

#include <doctest/doctest.h>

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
