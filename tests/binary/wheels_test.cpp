// Opt-in: real torch wheels from PyPI, read in place. Set TORCHFIX_WHEEL_DIR
// to a folder of wheels (pip download --no-deps torch==X --only-binary=:all:
// --python-version 3.12 --platform manylinux_2_28_x86_64 -d DIR); skipped
// with a reason otherwise. Measured lists are recorded in docs/wheels.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "binary/wheel.hpp"
#include "core/situation/coverage.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;

// What docs/wheels.md records per library: "arch=modules" for every image.
struct LibraryExpectation {
  std::string library;  // member path inside the wheel
  int modules = 0;
  std::vector<std::string> shares;
};

const std::map<std::string, std::vector<LibraryExpectation>>& measured() {
  static const std::map<std::string, std::vector<LibraryExpectation>> table = {
      {"torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl",
       {{"torch/lib/libtorch_cuda.so",
         378,
         {"sm_50=378", "sm_60=378", "sm_70=378", "sm_75=378", "sm_80=378", "sm_86=378", "sm_89=2", "sm_90=378",
          "sm_90a=3"}},
        {"torch/lib/libtorch_cuda_linalg.so",
         107,
         {"sm_50=107", "sm_60=107", "sm_70=107", "sm_80=107", "sm_86=107", "sm_90=107"}}}},
      {"torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl",
       {{"torch/lib/libtorch_cuda.so",
         476,
         {"sm_75=476", "sm_80=476", "sm_86=476", "sm_89=1", "sm_90=476", "sm_90a=4", "sm_100=476", "sm_100a=59",
          "sm_103f=59", "sm_120=476", "sm_120a=1", "sm_121a=1"}},
        {"torch/lib/libtorch_cuda_linalg.so",
         33,
         {"sm_75=1", "sm_80=33", "sm_86=33", "sm_90=33", "sm_100=33", "sm_120=33"}},
        {"torch/lib/libtorch_nvshmem.so", 1, {"sm_75=1", "sm_80=1", "sm_86=1", "sm_90=1", "sm_100=1", "sm_120=1"}}}},
  };
  return table;
}

std::vector<fs::path> cached_wheels() {
  std::vector<fs::path> out;
  const char* dir = std::getenv("TORCHFIX_WHEEL_DIR");
  if (!dir || !*dir || !fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("torch-") && name.ends_with(".whl")) out.push_back(entry.path());
  }
  std::ranges::sort(out);
  return out;
}

std::vector<std::string> shares_of(const FileKernels& file) {
  std::vector<std::string> out;
  for (const ArchShare& share : arch_shares(summarise(file))) {
    out.push_back(share.arch.name() + "=" + std::to_string(share.modules));
  }
  return out;
}

TEST(TorchWheels, MeasuredArchListsHold) {
  const auto wheels = cached_wheels();
  if (wheels.empty()) {
    GTEST_SKIP() << "no torch wheels cached: set TORCHFIX_WHEEL_DIR to a folder with torch-*.whl "
                    "(pip download --no-deps torch==2.7.1 ...; about 1 GB each)";
  }
  for (const fs::path& wheel : wheels) {
    SCOPED_TRACE(wheel.filename().string());
    auto members = read_wheel(wheel);
    ASSERT_TRUE(members) << members.error().message;
    std::map<std::string, const FileKernels*> by_member;
    for (const FileKernels& m : *members) {
      EXPECT_EQ(m.error, "") << m.path;
      by_member[m.path.substr(m.path.find('!') + 1)] = &m;
    }
    ASSERT_TRUE(by_member.contains("torch/lib/libtorch_cuda.so")) << "no kernels read from libtorch_cuda.so";
    EXPECT_GT(kernel_modules(summarise(*by_member["torch/lib/libtorch_cuda.so"])), 0);
    const auto known = measured().find(wheel.filename().string());
    if (known == measured().end()) continue;  // readable is all we know
    EXPECT_EQ(by_member.size(), known->second.size());
    for (const LibraryExpectation& expected : known->second) {
      ASSERT_TRUE(by_member.contains(expected.library)) << expected.library;
      const FileKernels& file = *by_member[expected.library];
      EXPECT_EQ(kernel_modules(summarise(file)), expected.modules) << expected.library;
      EXPECT_EQ(shares_of(file), expected.shares) << expected.library;
    }
  }
}

TEST(TorchWheels, VerdictsOnRealWheels) {
  const auto wheels = cached_wheels();
  const auto find = [&](std::string_view name) {
    return std::ranges::find_if(wheels, [&](const fs::path& p) { return p.filename() == name; });
  };
  const auto old = find("torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl");
  const auto latest = find("torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  if (old == wheels.end() && latest == wheels.end()) {
    GTEST_SKIP() << "neither torch 2.7.1 nor 2.15.0 wheel in TORCHFIX_WHEEL_DIR";
  }
  const auto verdict = [](const std::vector<FileKernels>& members, std::string_view library, const char* gpu) {
    for (const FileKernels& m : members) {
      if (m.path.ends_with(library)) return coverage_on(summarise(m), *ComputeCapability::parse(gpu));
    }
    ADD_FAILURE() << library << " not found";
    return Coverage{};
  };
  if (old != wheels.end()) {
    auto members = read_wheel(*old);
    ASSERT_TRUE(members) << members.error().message;
    // cu126 build: no sm_120 and no PTX, so Blackwell cannot run it.
    EXPECT_EQ(worst_reach(verdict(*members, "/libtorch_cuda.so", "12.0")), Reach::none);
    EXPECT_EQ(worst_reach(verdict(*members, "/libtorch_cuda.so", "6.1")), Reach::native);
  }
  if (latest != wheels.end()) {
    auto members = read_wheel(*latest);
    ASSERT_TRUE(members) << members.error().message;
    EXPECT_EQ(worst_reach(verdict(*members, "/libtorch_cuda.so", "12.1")), Reach::native);
    EXPECT_EQ(worst_reach(verdict(*members, "/libtorch_cuda.so", "6.1")), Reach::none);
    // 32 of the 33 linalg modules have no sm_75 and no PTX.
    const Coverage turing = verdict(*members, "/libtorch_cuda_linalg.so", "7.5");
    EXPECT_EQ(turing.native, 1);
    EXPECT_EQ(turing.none, 32);
  }
}

}  // namespace
}  // namespace torchfix::binary
