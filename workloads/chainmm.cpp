// CHAINMM (DOPPLER section 5): Y = C.(D.E) + A.B on size x size matrices, block partitioned the way
// einsummable decomposes it. With b coarse blocks per dimension and kb contraction blocks:
//   1. partial products of D.E and A.B          2 b^2 kb matmuls      (defaults: 32)
//   2. sums over the contraction: D.E directly    kb b + b^2 formations (12)
//      in kb row blocks (the contraction layout
//      of C.(DE)), A.B in b x b blocks
//   3. partial products of C.(DE)                  b^2 kb matmuls        (16)
//   4. pairwise sums of those partials             b^2 ceil(kb/2)        (8)
//   5. Y in kb x b blocks: pair sums + A.B         kb b adds             (8)
// which reproduces the level sizes of DOPPLER's chain_mm graph (76 ops). Edges: kb^2 b into the D.E
// sums, b^2 kb into each of the A.B sums, C.(DE) products and pair sums, kb b (ceil(kb/2) + 1)
// into Y (104 by default).
// Total flops: 6 size^3 + (3 kb - 2) size^2.
// Real execution (core/operation.hpp): A..E are the graph inputs "chainmm.A".."chainmm.E"; the
// fine-row sums read their rows of a coarse partial as a slice.
#include <algorithm>
#include <cmath>

#include "workloads/generators.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

struct ChainmmShape {
  std::int64_t blocks = 2;
  std::int64_t kblocks = 4;
  std::int64_t size = 8192;
  double dtype_bytes = 4;
};

Result<ChainmmShape> read_shape(const WorkloadParams& p) {
  ChainmmShape s;
  auto blocks = p.get_int("blocks", 2, 1, 4096);
  if (!blocks) return blocks.error();
  s.blocks = blocks.value();
  auto kblocks = p.get_int("kblocks", 0, 0, 4096);
  if (!kblocks) return kblocks.error();
  s.kblocks = kblocks.value() == 0 ? 2 * s.blocks : kblocks.value();
  if (s.kblocks % s.blocks != 0)
    return make_error(p.workload + ": parameter kblocks (" + std::to_string(s.kblocks) +
                      ") must be a multiple of blocks (" + std::to_string(s.blocks) +
                      ") so that contraction blocks nest in row blocks");
  auto size = p.get_int("size", 8192, 1, std::int64_t{1} << 40);
  if (!size) return size.error();
  s.size = size.value();
  if (s.size < s.kblocks)
    return make_error(p.workload + ": parameter size (" + std::to_string(s.size) +
                      ") must be at least kblocks (" + std::to_string(s.kblocks) + ")");
  auto dtype = p.get_real("dtype_bytes", 4, 0.125, 64);
  if (!dtype) return dtype.error();
  s.dtype_bytes = dtype.value();
  return s;
}

// Coarse blocks (b of them) each cut into kb/b fine blocks, so that a fine block never straddles
// two coarse blocks and slicing a coarse block by fine rows is well defined.
struct Tiling {
  std::vector<std::int64_t> coarse, fine;
  std::vector<std::int64_t> parent;  // coarse block of each fine block
};

Tiling make_tiling(std::int64_t n, std::int64_t blocks, std::int64_t kblocks) {
  Tiling t;
  t.coarse = split_sizes(n, blocks);
  for (std::int64_t i = 0; i < blocks; ++i)
    for (std::int64_t piece : split_sizes(t.coarse[i], kblocks / blocks)) {
      t.fine.push_back(piece);
      t.parent.push_back(i);
    }
  return t;
}

// The graph under construction and the indexing of its block ops.
class ChainmmBuilder {
 public:
  explicit ChainmmBuilder(const ChainmmShape& s)
      : s_(s), t_(make_tiling(s.size, s.blocks, s.kblocks)), graph_("chainmm") {}

  Result<Graph> build() {
    const auto de = partial_products("de_mm", "D", "E");
    const auto ab = partial_products("ab_mm", "A", "B");
    const auto de_sum = sum_into_fine_rows(de);
    const auto ab_sum = sum_over_contraction(ab);
    const auto cde = outer_products(de_sum);
    const auto pairs = pair_sums(cde);
    add_outputs(pairs, ab_sum);
    return graph_.build();
  }

 private:
  std::int64_t b() const { return s_.blocks; }
  std::int64_t kb() const { return s_.kblocks; }
  std::int64_t halves() const { return (kb() + 1) / 2; }
  std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t depth) const {
    return static_cast<std::size_t>((i * b() + j) * depth + k);
  }
  double rows(std::int64_t i) const { return static_cast<double>(t_.coarse[i]); }
  double fine(std::int64_t k) const { return static_cast<double>(t_.fine[k]); }

  // Stage 1: P[i,j,k] = X[i,k] . Y[k,j] with X, Y graph inputs.
  std::vector<OpId> partial_products(const char* tag, const char* left, const char* right) {
    std::vector<OpId> ids(static_cast<std::size_t>(b() * b() * kb()));
    for (std::int64_t i = 0; i < b(); ++i)
      for (std::int64_t j = 0; j < b(); ++j)
        for (std::int64_t k = 0; k < kb(); ++k) {
          OpSpec spec = matmul_op(label("", tag, {i, j, k}), rows(i), fine(k), rows(j), s_.dtype_bytes,
                                  {t_.coarse[i], t_.coarse[j]});
          spec.operation = operation(TensorFn::matmul, s_.dtype_bytes,
                                     {matrix(left, {block_of(0, t_.coarse, i), block_of(1, t_.fine, k)}),
                                      matrix(right, {block_of(0, t_.fine, k), block_of(1, t_.coarse, j)})});
          ids[at(i, j, k, kb())] = graph_.add_op(std::move(spec));
        }
    return ids;
  }

  // Graph input matrix "chainmm.<name>" (size x size).
  Operand matrix(const char* name, std::vector<SliceRange> slices) const {
    return Operand::input(std::string("chainmm.") + name, {s_.size, s_.size}, std::move(slices));
  }
  // The rows of fine block r within its coarse block (operands that are whole coarse blocks).
  SliceRange fine_rows(std::int64_t r) const {
    const SliceRange global = block_of(0, t_.fine, r);
    const std::int64_t base = block_of(0, t_.coarse, t_.parent[r]).begin;
    return {0, global.begin - base, global.end - base};
  }
  // An op summing `count` edge operands, each sliced by `slices`.
  OpId add_sum(OpSpec spec, int count, const std::vector<SliceRange>& slices) {
    spec.operation = operation(TensorFn::add, s_.dtype_bytes, std::vector<Operand>(static_cast<std::size_t>(count),
                                                                                   Operand::edge(slices)));
    return graph_.add_op(std::move(spec));
  }

  // Stage 2 for D.E: DE[r,j] = sum_k P[parent(r),j,k] restricted to the rows of fine block r.
  std::vector<OpId> sum_into_fine_rows(const std::vector<OpId>& partials) {
    std::vector<OpId> ids(static_cast<std::size_t>(kb() * b()));
    for (std::int64_t r = 0; r < kb(); ++r)
      for (std::int64_t j = 0; j < b(); ++j) {
        OpId id = add_sum(sum_op(label("", "de_sum", {r, j}), OpKind::formation, fine(r) * rows(j),
                                 static_cast<int>(kb()), s_.dtype_bytes, {t_.fine[r], t_.coarse[j]}),
                          static_cast<int>(kb()), {fine_rows(r)});
        for (std::int64_t k = 0; k < kb(); ++k)
          link(graph_, partials[at(t_.parent[r], j, k, kb())], id, static_cast<int>(k));
        ids[static_cast<std::size_t>(r * b() + j)] = id;
      }
    return ids;
  }

  // Stage 2 for A.B: AB[i,j] = sum_k P[i,j,k].
  std::vector<OpId> sum_over_contraction(const std::vector<OpId>& partials) {
    std::vector<OpId> ids(static_cast<std::size_t>(b() * b()));
    for (std::int64_t i = 0; i < b(); ++i)
      for (std::int64_t j = 0; j < b(); ++j) {
        OpId id = add_sum(sum_op(label("", "ab_sum", {i, j}), OpKind::formation, rows(i) * rows(j),
                                 static_cast<int>(kb()), s_.dtype_bytes, {t_.coarse[i], t_.coarse[j]}),
                          static_cast<int>(kb()), {});
        for (std::int64_t k = 0; k < kb(); ++k) link(graph_, partials[at(i, j, k, kb())], id, static_cast<int>(k));
        ids[at(i, j, 0, 1)] = id;
      }
    return ids;
  }

  // Stage 3: M[i,j,k] = C[i,k] . DE[k,j]; C is a graph input.
  std::vector<OpId> outer_products(const std::vector<OpId>& de_sum) {
    std::vector<OpId> ids(static_cast<std::size_t>(b() * b() * kb()));
    for (std::int64_t i = 0; i < b(); ++i)
      for (std::int64_t j = 0; j < b(); ++j)
        for (std::int64_t k = 0; k < kb(); ++k) {
          OpSpec spec = matmul_op(label("", "cde_mm", {i, j, k}), rows(i), fine(k), rows(j), s_.dtype_bytes,
                                  {t_.coarse[i], t_.coarse[j]});
          spec.operation = operation(TensorFn::matmul, s_.dtype_bytes,
                                     {matrix("C", {block_of(0, t_.coarse, i), block_of(1, t_.fine, k)}), Operand::edge()});
          OpId id = graph_.add_op(std::move(spec));
          link(graph_, de_sum[static_cast<std::size_t>(k * b() + j)], id, 1);
          ids[at(i, j, k, kb())] = id;
        }
    return ids;
  }

  // Stage 4: S[i,j,h] = M[i,j,2h] + M[i,j,2h+1] (a lone last partial is passed through).
  std::vector<OpId> pair_sums(const std::vector<OpId>& partials) {
    std::vector<OpId> ids(static_cast<std::size_t>(b() * b() * halves()));
    for (std::int64_t i = 0; i < b(); ++i)
      for (std::int64_t j = 0; j < b(); ++j)
        for (std::int64_t h = 0; h < halves(); ++h) {
          const std::int64_t first = 2 * h, count = std::min<std::int64_t>(2, kb() - first);
          OpId id = add_sum(sum_op(label("", "cde_sum", {i, j, h}), OpKind::formation, rows(i) * rows(j),
                                   static_cast<int>(count), s_.dtype_bytes, {t_.coarse[i], t_.coarse[j]}),
                            static_cast<int>(count), {});
          for (std::int64_t k = first; k < first + count; ++k)
            link(graph_, partials[at(i, j, k, kb())], id, static_cast<int>(k - first));
          ids[at(i, j, h, halves())] = id;
        }
    return ids;
  }

  // Stage 5: Y[r,j] = sum_h S[parent(r),j,h] + AB[parent(r),j] on the rows of fine block r.
  void add_outputs(const std::vector<OpId>& pairs, const std::vector<OpId>& ab_sum) {
    for (std::int64_t r = 0; r < kb(); ++r)
      for (std::int64_t j = 0; j < b(); ++j) {
        const std::int64_t i = t_.parent[r];
        OpId id = add_sum(sum_op(label("", "y_add", {r, j}), OpKind::elementwise, fine(r) * rows(j),
                                 static_cast<int>(halves() + 1), s_.dtype_bytes, {t_.fine[r], t_.coarse[j]}),
                          static_cast<int>(halves() + 1), {fine_rows(r)});
        for (std::int64_t h = 0; h < halves(); ++h)
          link(graph_, pairs[at(i, j, h, halves())], id, static_cast<int>(h));
        link(graph_, ab_sum[at(i, j, 0, 1)], id, static_cast<int>(halves()));
      }
  }

  ChainmmShape s_;
  Tiling t_;
  GraphBuilder graph_;
};

}  // namespace

WorkloadInfo chainmm_info() {
  return {"chainmm",
          "Y = C.(D.E) + A.B on size x size matrices split into blocks x blocks tiles with kblocks "
          "contraction blocks (0: twice blocks): block matmuls, formations and adds (76 ops by default, "
          "like DOPPLER's CHAINMM)",
          "blocks=2 kblocks=0 size=8192 dtype_bytes=4"};
}

Result<Graph> make_chainmm(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "chainmm");
  auto shape = read_shape(params);
  if (!shape) return shape.error();
  const double b = static_cast<double>(shape.value().blocks);
  const double kb = static_cast<double>(shape.value().kblocks);
  const double ops = 3 * b * b * kb + kb * b + b * b + b * b * std::ceil(kb / 2) + kb * b;
  auto budget = check_budget(params, ops, 8 * ops);
  if (!budget) return budget.error();
  return ChainmmBuilder(shape.value()).build();
}

}  // namespace gantry
