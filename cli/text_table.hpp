#pragma once
// Aligned plain-text tables for `-f table` output.
#include <ostream>
#include <string>
#include <vector>

namespace gantry::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gantry::cli
