#pragma once
// Job records as `gantry jobs` prints them (a table or JSON), whether they come from a local store
// or from a coordinator.
#include <ostream>
#include <string>
#include <vector>

#include "storage/records.hpp"

namespace gantry::cli {

// Sorted by start time; `where` ends the table ("3 job(s) in DIR"). Background improvement runs
// that ended (or were interrupted) are left out unless `background`, in JSON too (an idle
// coordinator with --improve makes one every few minutes); the table says how many.
void print_jobs(std::ostream& out, std::vector<JobRecord> jobs, bool json, const std::string& where,
                bool background = false);

}  // namespace gantry::cli
