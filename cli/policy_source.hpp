#pragma once
// Where a command finds a policy: "NAME" (the newest version in the store), "NAME:VERSION", a
// policy file (a path with a '/' or ending in .policy), or "builtin" (the one that ships with gantry).
#include <string>

#include "learner/policy_weights.hpp"
#include "storage/records.hpp"

namespace gantry::cli {

struct LoadedPolicy {
  PolicyWeights weights;
  std::string label;  // "name:version" or the file path
  PolicyRecord record; // empty fields for files
};

// Whether `spec` names a policy file (a path with a '/' or ending in .policy).
bool is_policy_file(const std::string& spec);

// Throws CliError naming the spec and what is wrong (no such name, version or file, bad bytes).
LoadedPolicy load_policy(const std::string& spec, const std::string& data_dir);

}  // namespace gantry::cli
