// torchfix: finds why PyTorch does not run on this machine's NVIDIA GPU, and fixes it.
#include "cli/app.hpp"
#include "cli/nvcc_wrap.hpp"

int main(int argc, char** argv) {
  // Started as nvcc by a build that stands torchfix in for the real one.
  if (argc > 0 && torchfix::cli::started_as_nvcc(argv[0])) return torchfix::cli::nvcc_wrap_main(argc, argv);
  // run() checks that the output reached its reader (`doctor --json >
  // /dev/full` is exit 2 with a line naming the command; cli/app.cpp finish_output).
  return torchfix::cli::run(argc, argv);
}
