#pragma once
// The build layer reads resources through the probe (probe/resources.hpp);
// the planner gets them from the Snapshot (core/toolchain.hpp).

#include "probe/resources.hpp"
