#include "core/fingerprint.hpp"

#include <algorithm>
#include <cstring>

#include "core/cluster.hpp"
#include "core/graph.hpp"
#include "core/hex.hpp"

namespace gantry {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Everything an executor's result depends on: the function, dtype, attributes and every operand
// (where its values come from, their shape and the slices taken).
void add_operation(Hasher& h, const Operation& operation) {
  h.add_u64(static_cast<std::uint64_t>(operation.fn) << 8 | static_cast<std::uint64_t>(operation.dtype));
  h.add_u64(operation.attrs.size());
  for (const auto& [key, value] : operation.attrs) {
    h.add_string(key);
    h.add_double(value);
  }
  h.add_u64(operation.operands.size());
  for (const Operand& operand : operation.operands) {
    h.add_u64(static_cast<std::uint64_t>(operand.source) << 1 | (operand.integer ? 1u : 0u));
    h.add_string(operand.name);
    h.add_double(operand.scale);
    h.add_u64(operand.shape.size());
    for (std::int64_t extent : operand.shape) h.add_u64(static_cast<std::uint64_t>(extent));
    h.add_u64(operand.slices.size());
    for (const SliceRange& slice : operand.slices) {
      h.add_u64(static_cast<std::uint64_t>(slice.dim));
      h.add_u64(static_cast<std::uint64_t>(slice.begin));
      h.add_u64(static_cast<std::uint64_t>(slice.end));
    }
  }
}

}  // namespace

void Hasher::add_u64(std::uint64_t word) {
  a_ = mix(a_ ^ word) + 0x9e3779b97f4a7c15ull;
  b_ = rotl(b_ + mix(word ^ 0x5851f42d4c957f2dull), 29) * 0x2545f4914f6cdd1dull;
  ++count_;
}

void Hasher::add_double(double value) {
  if (value == 0) value = 0;  // +0 and -0 hash alike
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  add_u64(bits);
}

void Hasher::add_string(const std::string& text) {
  add_u64(text.size());
  for (std::size_t i = 0; i < text.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, std::min<std::size_t>(8, text.size() - i));
    add_u64(word);
  }
}

Fingerprint Hasher::finish() const {
  return Fingerprint{mix(a_ ^ rotl(b_, 17) ^ count_), mix(b_ + count_ * 0x9e3779b97f4a7c15ull)};
}

std::string Fingerprint::hex() const {
  char bytes[16];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>(hi >> (56 - 8 * i));
    bytes[8 + i] = static_cast<char>(lo >> (56 - 8 * i));
  }
  return hex_encode(std::string_view(bytes, sizeof bytes));
}

bool Fingerprint::from_hex(const std::string& text, Fingerprint& out) {
  if (text.size() != 32) return false;
  std::uint64_t words[2] = {0, 0};
  for (std::size_t i = 0; i < 32; ++i) {
    const int digit = hex_digit(text[i]);
    if (digit < 0) return false;
    words[i / 16] = words[i / 16] << 4 | static_cast<std::uint64_t>(digit);
  }
  out = Fingerprint{words[0], words[1]};
  return true;
}

Fingerprint fingerprint(const Graph& g) {
  Hasher h;
  h.add_string("gantry-graph-v1");
  h.add_string(g.cost_unit());
  h.add_u64(static_cast<std::uint64_t>(g.size()));
  for (OpId op = 0; op < g.size(); ++op) {
    h.add_u64(static_cast<std::uint64_t>(g.kind(op)));
    for (double x : {g.flops(op), g.bytes(op), g.output_bytes(op), g.memory(op), g.cost(op), g.transfer_cost(op)})
      h.add_double(x);
    if (g.mem_alloc(op) != 0 || g.mem_free(op) != 0)  // keeps fingerprints of graphs without them stable
      for (double x : {g.mem_alloc(op), g.mem_free(op)})
      h.add_double(x);
    for (std::size_t k = 0; k < g.cost_kinds().size(); ++k)
      if (g.cost_for_kind(static_cast<int>(k), op) >= 0) {
        h.add_string(g.cost_kinds()[k]);
        h.add_double(g.cost_for_kind(static_cast<int>(k), op));
      }
  }
  h.add_u64(static_cast<std::uint64_t>(g.num_edges()));
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    h.add_u64(static_cast<std::uint64_t>(g.edge_src(e)) << 32 | static_cast<std::uint32_t>(g.edge_dst(e)));
    h.add_double(g.edge_bytes(e));
    h.add_double(g.edge_cost(e));
  }
  // What the ops compute and which operand each edge feeds: two graphs of equal costs that
  // compute different things run differently on an executor and are priced differently by
  // measured profiles. Only for graphs with operations, so the others keep their fingerprints.
  if (g.has_operations()) {
    h.add_string("operations");
    for (OpId op = 0; op < g.size(); ++op) {
      const Operation* operation = g.operation(op);
      h.add_u64(operation ? 1 : 0);
      if (operation) add_operation(h, *operation);
    }
    for (EdgeId e = 0; e < g.num_edges(); ++e) h.add_u64(static_cast<std::uint64_t>(g.edge_slot(e) + 1));
  }
  return h.finish();
}

Fingerprint fingerprint(const Cluster& c) {
  Hasher h;
  h.add_string("gantry-cluster-v2");
  h.add_u64(static_cast<std::uint64_t>(c.size()));
  for (const Device& d : c.devices()) {
    h.add_string(d.kind);
    for (double x : {d.peak_flops, d.mem_bandwidth, d.memory}) h.add_double(x);
    h.add_u64(static_cast<std::uint64_t>(d.streams));
    h.add_u64(static_cast<std::uint64_t>(d.host));
    for (double x : {d.egress_bandwidth, d.ingress_bandwidth, d.nic_bandwidth}) h.add_double(x);
    if (!d.copy_engine) h.add_string("no copy engine");  // only then: older clusters keep their fingerprints
    if (d.host_bandwidth > 0) {  // likewise
      h.add_string("host link");
      h.add_double(d.host_bandwidth);
    }
  }
  for (int host = 0; host < c.num_hosts(); ++host) h.add_double(c.host_nic_bandwidth(host));
  for (int a = 0; a < c.size(); ++a)
    for (int b = 0; b < c.size(); ++b) {
      h.add_double(c.link(a, b).bandwidth);
      h.add_double(c.link(a, b).latency);
    }
  return h.finish();
}

}  // namespace gantry
