#pragma once
// How fast any pipeline can be when the work divides freely among devices that may differ in
// speed. On identical devices that is work / devices; on a cluster mixing device kinds (H100 and
// A100 hosts) a layer's work depends on where it runs, so the work of one scheme's placement over
// the devices is no bound for the others: the fast devices should take more of it. The bound is
// the optimum of the fractional assignment (a linear program), found through its dual.
#include <vector>

namespace gantry {

// A lower bound on the busiest device's time when layer l costs `times[d][l]` on device d and
// any layer's work may be split among devices: the optimum T of
//   min T  s.t.  sum_d x[l][d] = 1,  x >= 0,  sum_l x[l][d] times[d][l] <= T for every d,
// through its dual, max over weights lambda on the devices (summing to 1) of
//   sum_l min_d lambda_d times[d][l],
// every value of which is a lower bound (weak duality). Devices with equal times form one kind
// (the dual is concave and symmetric in them); the weights of the kinds are the prices of the
// program solved by the simplex method, and the value returned is the dual's at those prices, so
// it is a bound whatever rounding did. Times are per microbatch, as given, finite and not
// negative, and every device lists as many layers (else std::invalid_argument). The tableau is
// dense: fine for the few device kinds of a cluster (0.8 s at 16 kinds x 128 layers).
double divisible_work_bound(const std::vector<std::vector<double>>& times);

}  // namespace gantry
