#pragma once
// torchfix as nvcc: started through the bin/nvcc link of a build's stand-in
// toolkit folder (builder/stand_in.hpp), it rewrites the compile's arch flags
// to the plan's (core/arch/nvcc_args.hpp), records the rewrite in the build log
// and replaces itself with the real nvcc (execv, no shell).

namespace torchfix::cli {

/// Returns true when torchfix was started as nvcc: argv[0]'s file name is "nvcc".
bool started_as_nvcc(const char* argv0);

/// Runs the stand-in: reads torchfix-nvcc.json next to argv[0] (or the one
/// $TORCHFIX_NVCC_CONF names), rewrites argv and the arch flags of
/// NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, appends one line per rewrite to the
/// build log and execs the real nvcc. Returns only when it cannot: exit code
/// 127 with one line on stderr (no settings file, real nvcc missing).
int nvcc_wrap_main(int argc, char** argv);

}  // namespace torchfix::cli
