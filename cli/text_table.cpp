#include "cli/text_table.hpp"

#include <algorithm>

namespace gantry::cli {

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> width;
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < rows_[r].size(); ++c) {
      std::string cell = rows_[r][c];
      if (c + 1 < rows_[r].size()) cell.resize(width[c] + 2, ' ');
      line += cell;
    }
    out << line << "\n";
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t w : width) total += w + 2;
      out << std::string(total > 2 ? total - 2 : total, '-') << "\n";
    }
  }
}

}  // namespace gantry::cli
