#pragma once
// Small text tests shared by readers and commands (file kinds by extension).
#include <string_view>

namespace gantry {

inline bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace gantry
