#include "storage/records.hpp"

#include <cctype>

namespace gantry {

const char* to_string(JobState state) {
  switch (state) {
    case JobState::running:
      return "RUNNING";
    case JobState::complete:
      return "COMPLETE";
    case JobState::failed:
      return "FAILED";
    case JobState::cancelled:
      return "CANCELLED";
    case JobState::interrupted:
      return "INTERRUPTED";
    case JobState::queued:
      return "QUEUED";
  }
  return "UNKNOWN";
}

bool is_final(JobState state) {
  return state == JobState::complete || state == JobState::failed || state == JobState::cancelled;
}

std::optional<JobState> parse_job_state(const std::string& text) {
  std::string upper;
  for (char c : text) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  for (JobState state : {JobState::running, JobState::complete, JobState::failed, JobState::cancelled,
                         JobState::interrupted, JobState::queued})
    if (upper == to_string(state)) return state;
  return std::nullopt;
}

}  // namespace gantry
