#pragma once
// The job manager keeps job records (RUNNING, then COMPLETE / CANCELLED / FAILED) in the store and
// runs each job through its own tuner actor.
#include <caf/all.hpp>

#include "actors/tuner_actor.hpp"

namespace gantry {

// Handles run_job -> TuneOutcome (to the sender, when the job ends). `tuner` is the tuner's
// configuration for the job (its job id names the record).
caf::behavior job_manager(caf::event_based_actor* self, TunerConfig tuner);

}  // namespace gantry
