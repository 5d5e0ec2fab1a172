#pragma once
// A stored policy written out: its weights as a .policy file (what --policy and --init read) and
// its training run's learning curve as .csv or .svg, wherever the record came from (the local
// store, or a coordinator's).
#include <string>

#include "storage/records.hpp"

namespace gantry::cli {

// Empty paths are skipped; throws CliError naming the flag and the file when one cannot be written.
void write_policy_files(const PolicyRecord& policy, const std::string& save_path, const std::string& curve_path);

}  // namespace gantry::cli
