#pragma once
// Stage costs the pipeline tests build their closed forms on.
#include "core/pipeline_scheme.hpp"

namespace gantry::testing {

// p identical stages: F, B, W per microbatch, activation `act` allocated by F, `held` kept from
// B to W, no transfer time unless given.
inline StageCosts uniform_stages(int p, double f, double b, double w, double comm = 0, double act = 10, double held = 2) {
  StageCosts c;
  for (int s = 0; s < p; ++s) {
    c.f.push_back(f);
    c.b.push_back(b);
    c.w.push_back(w);
    c.comm.push_back(comm);
    c.mem_f.push_back(act);
    c.mem_b.push_back(-(act - held));
    c.mem_w.push_back(-held);
    c.static_memory.push_back(0);
    c.flops.push_back(0);
  }
  return c;
}

}  // namespace gantry::testing
