// ```quiz blocks in lessons (docs/lessons.md, "Quizzes"): the parser shared by the window, which
// makes them interactive, and by anything that lints lessons.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

struct QuizChoice {
  std::string text;        // inline Markdown
  std::string explanation; // after " -- ", shown once answered; may be empty
  bool correct = false;
};

struct Quiz {
  std::string question;
  std::vector<QuizChoice> choices;
  std::string why;    // paragraphs separated by "\n\n"
  bool multi() const; // two or more right answers: check boxes
};

struct QuizError {
  int line = 0; // 1-based within the block
  std::string message;
};

// Parses the text inside a ```quiz fence. On a malformed block returns nullopt and fills `err`.
std::optional<Quiz> parse_quiz(std::string_view body, QuizError* err = nullptr);

// Is `chosen` (one flag per choice) exactly the set of right answers?
bool quiz_answer_right(const Quiz& q, const std::vector<bool>& chosen);

} // namespace wb
