// templates/kernel_load.py (doctor --run for extensions without a known op)
// finds the same fatbin containers in .nv_fatbin as torchfix's own reader,
// on libraries and objects the real nvcc built; -rdc objects have none it
// could load.
#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "binary/reader.hpp"
#include "fixtures.hpp"
#include "probe/process.hpp"

namespace torchfix {
namespace {

// The containers kernel_load.py finds in `file`: their count, or -1 when it
// finds no .nv_fatbin section.
int python_containers(const std::filesystem::path& file) {
  Command command;
  command.program = "python3";
  command.args = {"-c",
                  "import sys; sys.path.insert(0, sys.argv[1]); import kernel_load as k\n"
                  "s = k.fatbin_section(sys.argv[2])\n"
                  "print(-1 if s is None else len(list(k.containers(s))))",
                  std::string(TORCHFIX_SOURCE_DIR) + "/templates", file.string()};
  command.env = Environment{{"PATH", "/usr/bin:/bin"}};
  command.timeout = std::chrono::seconds(60);
  SystemProcessRunner runner;
  auto r = runner.run(command);
  if (!r || !r->succeeded()) {
    ADD_FAILURE() << (r ? r->err : r.error().message);
    return -2;
  }
  return std::stoi(r->out);
}

int reader_containers(const std::filesystem::path& file) {
  std::vector<std::byte> bytes = test::read_bytes(file);
  auto kernels = binary::read_kernels(bytes);
  if (!kernels) {
    ADD_FAILURE() << kernels.error().message;
    return -2;
  }
  return kernels->section == ".nv_fatbin" ? static_cast<int>(kernels->modules.size()) : -1;
}

TEST(KernelLoad, FindsTheContainersTorchfixsReaderFinds) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  for (const char* name : {"partial.so", "stub.so", "compressed.o", "sm80.o", "sm120_ptx.o"}) {
    TORCHFIX_FIXTURE(file, test::fixture(name));
    const int expected = reader_containers(file);
    EXPECT_GT(expected, 0) << name;
    EXPECT_EQ(python_containers(file), expected) << name;
  }
}

TEST(KernelLoad, RelocatableDeviceCodeAndHostOnlyFilesHaveNothingToLoad) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(rdc, test::fixture("rdc.o"));
  EXPECT_EQ(python_containers(rdc), -1) << "__nv_relfatbin needs the device linker, not cuModuleLoadFatBinary";
  EXPECT_EQ(python_containers("/bin/sh"), -1);
}

}  // namespace
}  // namespace torchfix
