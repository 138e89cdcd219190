#pragma once
// The parts of `torchfix doctor` that add findings after the diagnosis:
// the NGC container (what-if --container IMAGE, the notes inside an NGC
// image; the container as a fix is the resolver's) and --run (kernels
// launched for real, compared with the static verdicts).

#include <string>

#include "cli/context.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix::cli {

/// Holds the doctor options these extras read.
struct DoctorExtras {
  std::string container;  // --container IMAGE; empty: none
  bool run = false;       // --run
  double timeout_s = 10;  // --timeout (per probe); --run gets a multiple of it
};

/// Adds the container findings (what-if, inside an NGC image), and with --run the launch
/// findings, to `diagnosis`, judged on `situation` (situate() of the diagnosed snapshot). Errors: an unknown or
/// malformed --container image, an unreadable table, a child that failed to report.
Expected<void> add_doctor_extras(Diagnosis& diagnosis, const Situation& situation, const Knowledge& knowledge,
                                 const DoctorExtras& extras, Context& ctx);

}  // namespace torchfix::cli
