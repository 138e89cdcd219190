// torchfix: finds why PyTorch does not run on this machine's NVIDIA GPU, and fixes it.
#include "cli/app.hpp"

int main(int argc, char** argv) {
  return torchfix::cli::run(argc, argv);
}
