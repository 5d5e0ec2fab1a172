#pragma once
// The Hugging Face config.json files of configs/models/, built into the binary (CMake generates
// their table), so the catalog's models from config files work from any folder.
#include <string>
#include <vector>

namespace gantry {

struct ModelConfigFile {
  const char* name;  // the file's name without .json, e.g. "bamba-9b"
  const char* text;  // its config.json text
};

const std::vector<ModelConfigFile>& model_config_files();

}  // namespace gantry
