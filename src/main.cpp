// torchfix: finds why PyTorch does not run on this machine's NVIDIA GPU, and fixes it.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/app.hpp"
#include "cli/nvcc_wrap.hpp"
#include "report/printer.hpp"

int main(int argc, char** argv) {
  // Started as nvcc by a build that stands torchfix in for the real one.
  if (argc > 0 && torchfix::cli::started_as_nvcc(argv[0])) return torchfix::cli::nvcc_wrap_main(argc, argv);
  const int code = torchfix::cli::run(argc, argv);
  // A report that did not reach its reader (`doctor --json > /dev/full`, a
  // closed pipe's EIO) is a failed run, whatever the diagnosis said.
  const bool flushed = std::fflush(stdout) == 0 || errno == EPIPE;
  if (!flushed || torchfix::first_write_error() != 0) {
    const int err = torchfix::first_write_error() != 0 ? torchfix::first_write_error() : errno;
    std::fprintf(stderr, "torchfix: cannot write the output: %s; check the disk or the file it goes to\n",
                 std::strerror(err != 0 ? err : EIO));
    return 2;
  }
  return code;
}
