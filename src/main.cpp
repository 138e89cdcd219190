// torchfix: finds why PyTorch does not run on this machine's NVIDIA GPU, and fixes it.
#include "cli/app.hpp"
#include "cli/nvcc_wrap.hpp"

int main(int argc, char** argv) {
  // Started as nvcc by a build that stands torchfix in for the real one.
  if (argc > 0 && torchfix::cli::started_as_nvcc(argv[0])) return torchfix::cli::nvcc_wrap_main(argc, argv);
  return torchfix::cli::run(argc, argv);
}
