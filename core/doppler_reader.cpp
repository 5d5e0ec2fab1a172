// The DOPPLER compute-graph text format (public DOPPLER code, compute_graph/*.txt):
//   line 1: total node count including input nodes
//   line 2: ids of the input nodes (dropped: they cost nothing)
//   line 3: edge source ids, line 4: edge destination ids, over the remaining N compute nodes
//   then N lines "comp,comm[,type]": compute cost and the cost of shipping the output elsewhere.
// Ids are read as digit runs (the files have irregular spacing, "16,6" and "16, 6" alike).
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/graph_io.hpp"

namespace gantry {

namespace {

std::vector<long long> digit_runs(const std::string& line) {
  std::vector<long long> out;
  for (std::size_t i = 0; i < line.size();) {
    if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      long long value = 0;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
        // Saturate instead of overflowing: such an id is reported as unknown anyway.
        if (value < 100000000000000LL) value = value * 10 + (line[i] - '0');
        ++i;
      }
      out.push_back(value);
    } else {
      ++i;
    }
  }
  return out;
}

// The ids of header line `line_no` (1-4): digits, separated by commas and blanks; anything else
// (a minus sign, a decimal point, a letter) is an error, not a separator.
Result<std::vector<long long>> header_ids(const std::string& line, int line_no, const std::string& source) {
  for (char c : line)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',' && c != ' ' && c != '\t' && c != '\r')
      return make_error(source + ":" + std::to_string(line_no) + ": '" + std::string(1, c) +
                        "' in a line of node ids (whole numbers >= 0, separated by commas)");
  return digit_runs(line);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string item;
  while (std::getline(in, item, ',')) {
    auto b = item.find_first_not_of(" \t\r");
    auto e = item.find_last_not_of(" \t\r");
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  return out;
}

Result<double> parse_cost(const std::string& text, const std::string& where, const char* what) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return make_error(where + ": " + what + " '" + text + "' is not a number");
  if (!std::isfinite(v)) return make_error(where + ": " + what + " is not a finite number");
  if (v < 0) return make_error(where + ": " + what + " is negative (" + text + ")");
  return v;
}

// An op's type in the gdp_* files (the public simulator's list): einsummable ops are matrix
// products, formations gather blocks, the rest cost what their line says. Any other word is
// refused: a misspelt "einsumable" read as a plain op would change the kind the cost model sees.
Result<OpKind> op_kind_of_type(const std::string& type, const std::string& where) {
  if (type == "einsummable") return OpKind::matmul;
  if (type == "formation") return OpKind::formation;
  for (const char* plain : {"input", "complexer", "squeezer", "fill", "select", "unknown"})
    if (type == plain) return OpSpec{}.kind;
  return make_error(where + ": unknown op type '" + type +
                    "' (known: input, formation, complexer, squeezer, fill, select, einsummable, unknown)");
}

}  // namespace

Result<Graph> read_graph_doppler(const std::string& text, const std::string& source) {
  std::vector<std::string> lines;
  {
    std::stringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string::npos) lines.pop_back();
  if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0) lines[0].erase(0, 3);  // a UTF-8 byte-order mark
  if (lines.size() < 4)
    return make_error(source + ": a DOPPLER graph needs at least 4 lines (node count, inputs, edge sources, "
                               "edge destinations); found " + std::to_string(lines.size()));
  std::vector<long long> header[4];
  for (int k = 0; k < 4; ++k) {
    auto ids = header_ids(lines[k], k + 1, source);
    if (!ids) return ids.error();
    header[k] = std::move(ids).value();
  }
  const std::vector<long long>&total = header[0], &inputs = header[1], &srcs = header[2], &dsts = header[3];
  if (total.size() != 1) return make_error(source + ":1: expected the total node count");
  if (srcs.size() != dsts.size())
    return make_error(source + ":3-4: " + std::to_string(srcs.size()) + " edge sources but " +
                      std::to_string(dsts.size()) + " edge destinations");
  const long long n = total[0] - static_cast<long long>(inputs.size());
  if (n <= 0) return make_error(source + ":1: the graph is empty (no compute nodes besides the inputs)");
  if (static_cast<long long>(lines.size()) - 4 != n)
    return make_error(source + ": expected " + std::to_string(n) + " cost lines (" + std::to_string(total[0]) +
                      " nodes minus " + std::to_string(inputs.size()) + " inputs), found " +
                      std::to_string(lines.size() - 4));

  GraphBuilder builder(source, "units");
  for (long long i = 0; i < n; ++i) {
    const int line_no = static_cast<int>(i) + 5;
    const std::string where = source + ":" + std::to_string(line_no);
    auto fields = split_fields(lines[4 + i]);
    if (fields.size() < 2) return make_error(where + ": expected 'comp,comm[,type]'");
    auto comp = parse_cost(fields[0], where, "compute cost");
    if (!comp) return comp.error();
    auto comm = parse_cost(fields[1], where, "communication cost");
    if (!comm) return comm.error();
    OpSpec op;
    op.name = "n" + std::to_string(i);
    op.cost = comp.value();
    op.transfer_cost = comm.value();
    op.line = line_no;
    if (fields.size() >= 3) {
      auto kind = op_kind_of_type(fields[2], where);
      if (!kind) return kind.error();
      op.kind = kind.value();
    }
    builder.add_op(std::move(op));
  }
  for (std::size_t e = 0; e < srcs.size(); ++e) {
    for (const auto& [id, line] : {std::pair{srcs[e], 3}, std::pair{dsts[e], 4}})
      if (id >= n)  // before the cast to an op id, which would wrap 2^32 + 2 to 2
        return make_error(source + ":" + std::to_string(line) + ": edge " + std::to_string(e) + ": node id " +
                          std::to_string(id) + " is not a compute node (the graph has " + std::to_string(n) + ": 0-" +
                          std::to_string(n - 1) + ")");
    builder.add_edge(EdgeSpec{static_cast<OpId>(srcs[e]), static_cast<OpId>(dsts[e]), 0, -1, 3});
  }
  return builder.build();
}

}  // namespace gantry
