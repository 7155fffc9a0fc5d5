#include "quiz.hpp"

#include <fmt/format.h>

namespace wb {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

} // namespace

bool Quiz::multi() const {
  int n = 0;
  for (auto& c : choices) n += c.correct;
  return n > 1;
}

bool quiz_answer_right(const Quiz& q, const std::vector<bool>& chosen) {
  if (chosen.size() != q.choices.size()) return false;
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i] != q.choices[i].correct) return false;
  return true;
}

std::optional<Quiz> parse_quiz(std::string_view body, QuizError* err) {
  Quiz q;
  auto fail = [&](int line, std::string msg) -> std::optional<Quiz> {
    if (err) *err = {line, std::move(msg)};
    return std::nullopt;
  };
  enum { want_question, choices, why } state = want_question;
  bool blank_in_why = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) nl = body.size();
    std::string_view line = trim(body.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) {
      if (state == why) blank_in_why = true;
      continue;
    }
    switch (state) {
    case want_question:
      if (!starts_with(line, "question:"))
        return fail(line_no, "a quiz starts with a `question:` line");
      q.question = std::string(trim(line.substr(9)));
      if (q.question.empty()) return fail(line_no, "the question is empty");
      state = choices;
      break;
    case choices:
      if (starts_with(line, "- [ ] ") || starts_with(line, "- [x] ") ||
          starts_with(line, "- [X] ")) {
        QuizChoice c;
        c.correct = line[3] != ' ';
        std::string_view rest = line.substr(6);
        if (size_t sep = rest.find(" -- "); sep != std::string_view::npos) {
          c.explanation = std::string(trim(rest.substr(sep + 4)));
          rest = rest.substr(0, sep);
        }
        c.text = std::string(trim(rest));
        if (c.text.empty()) return fail(line_no, "a choice with no text");
        q.choices.push_back(std::move(c));
      } else if (starts_with(line, "why:")) {
        q.why = std::string(trim(line.substr(4)));
        state = why;
      } else if (starts_with(line, "question:")) {
        return fail(line_no, "a second `question:` line (one question per quiz)");
      } else {
        return fail(line_no,
                    fmt::format("expected a choice (`- [ ] ...` or `- [x] ...`) or `why:`, "
                                "found `{}`",
                                line.substr(0, 40)));
      }
      break;
    case why:
      if (blank_in_why)
        q.why += "\n\n";
      else if (!q.why.empty())
        q.why += ' ';
      q.why += std::string(line);
      blank_in_why = false;
      break;
    }
  }
  if (state == want_question) return fail(1, "no `question:` line");
  if (q.choices.size() < 2) return fail(line_no, "a quiz needs at least two choices");
  bool any = false;
  for (auto& c : q.choices) any |= c.correct;
  if (!any) return fail(line_no, "no choice is marked right (`- [x] ...`)");
  if (state != why || q.why.empty())
    return fail(line_no, "no `why:` explanation after the choices");
  return q;
}

} // namespace wb
