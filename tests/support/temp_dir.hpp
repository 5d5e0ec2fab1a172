#pragma once
// A fresh folder for one test, removed with everything in it afterwards.
#include <string>

#include "core/temp_folder.hpp"

namespace gantry::testing {

struct TempDir : TempFolder {
  explicit TempDir(const std::string& prefix = "gantry-test") : TempFolder(prefix) {}
};

}  // namespace gantry::testing
