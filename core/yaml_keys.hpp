#pragma once
// YAML mappings whose keys are each written once. yaml-cpp keeps every pair of a mapping and its
// lookup finds the first, so a job or cluster file that sets a key twice ran with the first value
// and said nothing; gantry's readers refuse such a file, naming the key and both lines.
#include <string>

#include "core/result.hpp"

namespace YAML {
class Node;
}

namespace gantry {

// An error naming the first key written twice in one mapping anywhere under `root` ("SOURCE:L:
// key "K" is set again (first set on line F)"), or Ok.
Status check_unique_keys(const YAML::Node& root, const std::string& source);

}  // namespace gantry
