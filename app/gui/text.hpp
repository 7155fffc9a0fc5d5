// Text that is never cut: wrapped without splitting a figure, or cut with the whole on hover.
#pragma once
#include <imgui.h>
#include <string>

namespace wb::gui {

// Wrapped to `width` (0: to the right edge) without splitting a figure from its digits or unit.
void text_wrap(const std::string& s, float width = 0);
void text_wrap_colored(const ImVec4& col, const std::string& s);
void text_wrap_disabled(const std::string& s);
// One line: cut with an ellipsis when it does not fit, the whole text on hover.
void text_fit(const std::string& s, bool disabled = false);
// A tooltip of wrapped text, its width capped (about 32 characters' worth of em).
void tooltip_text(const std::string& s);

} // namespace wb::gui
