#include "tuner/stg_optima.hpp"

#include <fstream>
#include <sstream>

namespace gantry {

Result<std::vector<StgOptimum>> read_stg_optima(const std::string& path) {
  std::ifstream file(path);
  if (!file) return make_error(path + ": cannot open file for reading");
  std::vector<StgOptimum> rows;
  std::string line;
  int line_no = 0;
  while (std::getline(file, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, ',')) fields.push_back(field);
    const std::string where = path + ":" + std::to_string(line_no);
    if (fields.size() != 3 && fields.size() != 4)
      return make_error(where + ": expected 'path,procs,opt' or 'path,procs,lb,ub'");
    StgOptimum row;
    row.graph = fields[0];
    try {
      row.processors = std::stoi(fields[1]);
      row.lower = std::stod(fields[2]);
      row.upper = fields.size() == 4 ? std::stod(fields[3]) : row.lower;
    } catch (const std::exception&) {
      return make_error(where + ": a number field is not a number");
    }
    row.proven = fields.size() == 3;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace gantry
