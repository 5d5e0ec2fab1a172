#pragma once
// Output files checked before long work: a run that trains or tunes for minutes should not end by
// failing to write its result to a folder that does not exist.
#include <string>

namespace gantry::cli {

// A CliError naming `flag` and `path` when the file could not be created: its folder is missing,
// is not a folder, or is not writable. An empty path (no output asked for) passes.
void check_output_path(const std::string& flag, const std::string& path);

}  // namespace gantry::cli
