#pragma once
// The published optima of the Standard Task Graph Set (CaseN_P_OPT.csv): a 3-field row
// "path,procs,opt" is a proven optimum; a 4-field row "path,procs,lb,ub" only bounds it.
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

struct StgOptimum {
  std::string graph;  // relative path, e.g. "50/rand0000.stg"
  int processors = 0;
  bool proven = false;
  double lower = 0;   // the optimum when proven, else the published lower bound
  double upper = 0;   // the optimum when proven, else the best known schedule
};

Result<std::vector<StgOptimum>> read_stg_optima(const std::string& path);

}  // namespace gantry
