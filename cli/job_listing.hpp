#pragma once
// Job records as `gantry jobs` prints them (a table or JSON), whether they come from a local store
// or from a coordinator.
#include <ostream>
#include <string>
#include <vector>

#include "storage/records.hpp"

namespace gantry::cli {

// Sorted by start time; `where` ends the table ("3 job(s) in DIR").
void print_jobs(std::ostream& out, std::vector<JobRecord> jobs, bool json, const std::string& where);

}  // namespace gantry::cli
