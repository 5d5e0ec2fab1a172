#include "tuner/pipeline/work_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace gantry {
namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();

// Devices with the same layer times, as one kind: each device's share of its layers' time is
// `share[l]` = times[l] / count when the kind's weight is spread evenly over its devices.
struct DeviceKind {
  std::vector<double> times;
  int count = 0;
  std::vector<double> share;
};

std::vector<DeviceKind> kinds_of(const std::vector<std::vector<double>>& times) {
  std::vector<DeviceKind> kinds;
  for (const auto& device : times) {
    auto same = std::find_if(kinds.begin(), kinds.end(), [&](const DeviceKind& k) { return k.times == device; });
    if (same == kinds.end()) kinds.push_back({device, 1, {}});
    else ++same->count;
  }
  for (DeviceKind& k : kinds) {
    k.share = k.times;
    for (double& t : k.share) t /= k.count;
  }
  return kinds;
}

// The dual's value at kind weights `weight`: sum over layers of the smallest weighted share.
double dual_value(const std::vector<DeviceKind>& kinds, const std::vector<double>& weight) {
  double total = 0;
  for (std::size_t l = 0; l < kinds[0].share.size(); ++l) {
    double least = kNone;
    for (std::size_t k = 0; k < kinds.size(); ++k) least = std::min(least, weight[k] * kinds[k].share[l]);
    total += least;
  }
  return total;
}

// The fractional assignment's linear program over kinds, solved by the simplex method (Bland's
// rule, so degenerate pivots cannot cycle): variables x[l][k] (layer l's share on kind k), T and
// one slack per kind; rows sum_k x[l][k] = 1 and sum_l share[k][l] x[l][k] - T + slack_k = 0.
// The start puts every layer on kind 0 (T its load, the other slacks T). Returns the dual prices
// of the load rows, the reduced costs of the slacks at the optimum: the dual's weights.
class AssignmentProgram {
 public:
  explicit AssignmentProgram(const std::vector<DeviceKind>& kinds)
      : layers_(kinds[0].share.size()), kinds_(kinds.size()), rows_(layers_ + kinds_), columns_(layers_ * kinds_ + 1 + kinds_),
        table_(rows_ + 1, std::vector<double>(columns_ + 1, 0.0)), basis_(rows_) {
    for (std::size_t l = 0; l < layers_; ++l) {
      for (std::size_t k = 0; k < kinds_; ++k) {
        table_[l][share_column(l, k)] = 1;
        table_[layers_ + k][share_column(l, k)] = kinds[k].share[l];
      }
      table_[l][columns_] = 1;
    }
    for (std::size_t k = 0; k < kinds_; ++k) {
      table_[layers_ + k][time_column()] = -1;
      table_[layers_ + k][slack_column(k)] = 1;
    }
    table_[rows_][time_column()] = 1;  // minimise T
    for (std::size_t l = 0; l < layers_; ++l) pivot(l, share_column(l, 0));
    pivot(layers_, time_column());
    for (std::size_t k = 1; k < kinds_; ++k) pivot(layers_ + k, slack_column(k));
  }

  std::vector<double> optimal_prices() {
    // Bland's rule cannot cycle in exact arithmetic; with tolerances a cap keeps it finite (any
    // prices still give a bound).
    const std::size_t max_pivots = 50 * (rows_ + columns_);
    for (std::size_t pivots = 0; pivots < max_pivots; ++pivots) {
      std::size_t entering = columns_;
      for (std::size_t j = 0; j < columns_ && entering == columns_; ++j)
        if (table_[rows_][j] < -kTolerance) entering = j;
      if (entering == columns_) break;
      std::size_t leaving = rows_;
      double ratio = kNone;
      for (std::size_t i = 0; i < rows_; ++i) {
        const double a = table_[i][entering];
        if (a <= kTolerance) continue;
        const double r = table_[i][columns_] / a;
        if (r < ratio - kTolerance || (r <= ratio + kTolerance && leaving < rows_ && basis_[i] < basis_[leaving]))
          ratio = r, leaving = i;
      }
      if (leaving == rows_) break;  // unbounded: cannot happen, T is at least every load
      pivot(leaving, entering);
    }
    std::vector<double> prices(kinds_);
    for (std::size_t k = 0; k < kinds_; ++k) prices[k] = std::max(0.0, table_[rows_][slack_column(k)]);
    return prices;
  }

 private:
  static constexpr double kTolerance = 1e-11;
  std::size_t share_column(std::size_t l, std::size_t k) const { return l * kinds_ + k; }
  std::size_t time_column() const { return layers_ * kinds_; }
  std::size_t slack_column(std::size_t k) const { return layers_ * kinds_ + 1 + k; }

  void pivot(std::size_t row, std::size_t column) {
    std::vector<double>& p = table_[row];
    const double scale = p[column];
    for (double& v : p) v /= scale;
    for (std::size_t i = 0; i <= rows_; ++i) {
      if (i == row || table_[i][column] == 0) continue;
      const double factor = table_[i][column];
      for (std::size_t j = 0; j <= columns_; ++j) table_[i][j] -= factor * p[j];
    }
    basis_[row] = column;
  }

  std::size_t layers_, kinds_, rows_, columns_;
  std::vector<std::vector<double>> table_;  // rows_ constraint rows, then the objective; last column: values
  std::vector<std::size_t> basis_;
};

}  // namespace

double divisible_work_bound(const std::vector<std::vector<double>>& times) {
  if (times.empty() || times[0].empty()) return 0;
  // The simplex's tolerances are absolute: it runs on times scaled to a largest of 1.
  double largest = 0;
  for (const auto& device : times) {
    if (device.size() != times[0].size())
      throw std::invalid_argument("divisible_work_bound: devices with different layer counts");
    for (double t : device) largest = std::max(largest, t);
  }
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  std::vector<std::vector<double>> scaled = times;
  for (auto& device : scaled)
    for (double& t : device) t /= largest;
  const std::vector<DeviceKind> kinds = kinds_of(scaled);
  if (kinds.size() == 1) return dual_value(kinds, {1.0}) * largest;
  // The dual's value at the program's prices: a bound whatever rounding did to the pivots
  // (weak duality), and the optimum when the simplex found it.
  std::vector<double> prices = AssignmentProgram(kinds).optimal_prices();
  double sum = 0;
  for (double p : prices) sum += p;
  if (!(sum > 0)) return 0;
  for (double& p : prices) p /= sum;
  return dual_value(kinds, prices) * largest;
}

}  // namespace gantry
