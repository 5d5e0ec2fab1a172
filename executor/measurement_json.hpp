#pragma once
// A measurement as JSON: what gantry-exec writes (docs/formats.md, "Measurements") and what a
// process that measures through gantry-exec reads back (executor/external_executor.hpp).
#include <string>

#include "core/graph.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// The makespans, their median, minimum, maximum and spread, and the median run's ops and transfers
// (by op id and name); `devices` is the number of devices it ran on. Without the outputs' values.
std::string measurement_to_json(const Graph& graph, int devices, const Measurement& measurement, int indent = 2);

// Reads it back for `graph` (the graph that was run): every op once, devices below the count the
// file gives, times finite and in order; the error names `source` and what is wrong. Files of
// gantry-exec before op ids name each op only: they are found by name (unique in the graph), and
// the median run's makespan is taken as the median.
Result<Measurement> measurement_from_json(const std::string& text, const Graph& graph, const std::string& source);

}  // namespace gantry
