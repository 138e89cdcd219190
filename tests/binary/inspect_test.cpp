// `torchfix inspect` end to end: the built binary run as a child process on
// nvcc-compiled fixtures; checks output, JSON and exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../support/linux_only.hpp"
#include "fixtures.hpp"
#include "probe/process.hpp"

namespace torchfix {
namespace {

ProcessResult inspect(std::vector<std::string> args) {
  Command command;
  command.program = TORCHFIX_BINARY;
  command.args = {"inspect"};
  command.args.insert(command.args.end(), args.begin(), args.end());
  command.env = Environment{{"PATH", "/usr/bin:/bin"}, {"NO_COLOR", "1"}};
  command.timeout = std::chrono::seconds(60);
  SystemProcessRunner runner;
  auto result = runner.run(command);
  if (!result) {
    ADD_FAILURE() << result.error().message;
    return {};
  }
  return *result;
}

TEST(Inspect, TableListsArchsWithPartialCoverage) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  const auto result = inspect({library.string()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("4 kernel modules"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("without kernels"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("sm_120         SASS              2/4  partial: 2 of 4 lack it"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("sm_80          SASS              3/4"), std::string::npos) << result.out;
}

TEST(Inspect, GpuVerdictSetsTheExitCode) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(sm80, test::fixture("sm80.o"));
  TORCHFIX_FIXTURE(ptx90, test::fixture("ptx90.o"));
  auto orin = inspect({sm80.string(), "--gpu", "8.7"});
  EXPECT_EQ(orin.exit_code, 1);
  EXPECT_NE(orin.out.find("cannot run on 8.7 (sm_87): no usable SASS or PTX in 1 of 1 kernel module ("),
            std::string::npos)
      << orin.out;
  auto a100 = inspect({sm80.string(), "--gpu", "sm_80"});
  EXPECT_EQ(a100.exit_code, 0);
  EXPECT_NE(a100.out.find("runs natively on 8.0"), std::string::npos) << a100.out;
  auto jit = inspect({ptx90.string(), sm80.string(), "--gpu", "12.0"});
  EXPECT_EQ(jit.exit_code, 1);  // sm80.o cannot run on 12.0
  EXPECT_NE(jit.out.find("runs through PTX JIT on 12.0"), std::string::npos) << jit.out;
  auto jit_only = inspect({ptx90.string(), "--gpu", "12.0"});
  EXPECT_EQ(jit_only.exit_code, 0);
}

// The false alarm of issue 19: CUDA 13's cuBLAS, cuDNN and NCCL hold modules
// for other archs beside ones for the GPU; inspect judged them "cannot run"
// while the doctor, rightly, did not. Both now use library_reach.
TEST(Inspect, ALibraryWithModulesForOtherArchsBesideTheGpusRunsAsTheDoctorSays) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  auto blackwell = inspect({library.string(), "--gpu", "RTX 5090"});
  EXPECT_EQ(blackwell.exit_code, 0) << blackwell.out << blackwell.err;
  EXPECT_NE(blackwell.out.find("runs through PTX JIT on 12.0 (sm_120): only PTX in 1 of 4 kernel modules"),
            std::string::npos)
      << blackwell.out;
  EXPECT_NE(blackwell.out.find("; partial: 1 of 4 kernel modules have no image for 12.0"), std::string::npos)
      << blackwell.out;
  auto volta = inspect({library.string(), "--gpu", "7.0"});  // sm_80 SASS and compute_90 PTX: nothing reaches 7.0
  EXPECT_EQ(volta.exit_code, 1) << volta.out;
  EXPECT_NE(volta.out.find("cannot run on 7.0 (sm_70): no usable SASS or PTX in 4 of 4 kernel modules"),
            std::string::npos)
      << volta.out;
}

// Fatbins kept in an x86-64 large-model data section (.ldata), the way
// cuFFT keeps 23,983 of its 23,984 (issue 19: `inspect /usr/local/cuda/lib64
// --gpu "RTX 5090"` called libcufft.so.12 "cannot run on 12.0" from the one
// sm_75 module in its .nv_fatbin). Two real nvcc fatbins among other data,
// with a fatbin magic number whose header claims more than the section
// holds, in a library linked by the host compiler.
TEST(Inspect, FatbinsInsideLargeDataSectionsAreFound) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(sm80, test::fixture("sm80.fatbin"));
  TORCHFIX_FIXTURE(sm120, test::compile(test::kernel_source("k120"),
                                        {"-fatbin", "-gencode", "arch=compute_120,code=sm_120"}, "sm120.fatbin"));
  const auto dir = std::filesystem::path(testing::TempDir()) / "ldata";
  std::filesystem::create_directories(dir);
  const auto source = dir / "ldata.c";
  std::ofstream(source) << "__asm__(\".section .ldata,\\\"aw\\\",@progbits\\n.balign 8\\n.ascii \\\"other data\\\"\\n"
                           ".balign 8\\n.long 0xBA55ED50\\n.short 1\\n.short 16\\n.quad 0x7fffffffffff\\n"
                        << ".balign 8\\n.incbin \\\"" << sm80.string() << "\\\"\\n.quad 42\\n.balign 8\\n.incbin \\\""
                        << sm120.string() << "\\\"\\n.previous\\n\");\nint answer(void) { return 42; }\n";
  Command cc;
  cc.program = "/usr/bin/cc";
  cc.args = {"-shared", "-fPIC", source.string(), "-o", (dir / "libldata.so").string()};
  cc.timeout = std::chrono::seconds(60);
  SystemProcessRunner runner;
  const auto built = runner.run(cc);
  ASSERT_TRUE(built && built->exit_code == 0) << (built ? built->err : built.error().message);
  const auto library = (dir / "libldata.so").string();
  auto blackwell = inspect({library, "--gpu", "RTX 5090"});
  EXPECT_EQ(blackwell.exit_code, 0) << blackwell.out << blackwell.err;
  EXPECT_NE(blackwell.out.find("(elf, .ldata; 2 kernel modules"), std::string::npos) << blackwell.out;
  EXPECT_NE(blackwell.out.find("sm_120         SASS              1/2"), std::string::npos) << blackwell.out;
  EXPECT_NE(blackwell.out.find("sm_80          SASS              1/2"), std::string::npos) << blackwell.out;
  auto volta = inspect({library, "--gpu", "7.0"});  // sm_80, compute_80 and sm_120: nothing reaches 7.0
  EXPECT_EQ(volta.exit_code, 1) << volta.out;
}

// The issue's own example, where the toolkit has cuFFT: its kernels for the
// GPU are found in .ldata, and the verdict is the doctor's.
TEST(Inspect, CufftOfTheInstalledToolkitIsJudgedByItsLargeDataFatbins) {
  TORCHFIX_LINUX_ONLY("passes a /path argument, which CLI11 on Windows reads as an option");
  const std::filesystem::path cufft = "/usr/local/cuda/lib64/libcufft.so";
  if (!std::filesystem::exists(cufft)) GTEST_SKIP() << cufft << " not found (no CUDA toolkit with cuFFT)";
  auto blackwell = inspect({cufft.string(), "--gpu", "RTX 5090"});
  EXPECT_EQ(blackwell.exit_code, 0) << blackwell.out << blackwell.err;
  EXPECT_NE(blackwell.out.find("sm_120         SASS"), std::string::npos) << blackwell.out;
}

// The input fuzz_size_paths found (tests/fixtures/fuzz/size-paths-libelf-
// section-count.bin, mode 0: a sparse image): 842 bytes that declare a 51 GB
// ELF file whose section table libelf's elf_begin sized at 14 GB (42 s and
// 18 GB of memory under ASan, then "no CUDA kernels", exit 0). The section
// count is now checked before libelf allocates anything.
TEST(Inspect, AnImplausibleSectionTableIsRefusedBeforeLibelfAllocatesIt) {
  const std::string input = TORCHFIX_SOURCE_DIR "/tests/fixtures/fuzz/size-paths-libelf-section-count.bin";
  std::ifstream in(input, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 6u) << input;
  std::uint64_t size = 0;
  for (int i = 5; i >= 1; --i) size = size << 8 | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  const auto path = std::filesystem::path(testing::TempDir()) / "sparse-elf.so";
  std::ofstream(path, std::ios::binary) << bytes.substr(6);
  std::filesystem::resize_file(path, size);  // a hole: 51 GB declared, 4 KB on disk
  const auto result = inspect({path.string()});
  std::filesystem::remove(path);
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find("not a readable ELF file"), std::string::npos) << result.err;
}

TEST(Inspect, GpuProductNamesResolveThroughTheTable) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(sm90a, test::fixture("sm90a.o"));
  auto hopper = inspect({sm90a.string(), "--gpu", "H200"});
  EXPECT_EQ(hopper.exit_code, 0) << hopper.out << hopper.err;
  EXPECT_NE(hopper.out.find("on 9.0"), std::string::npos) << hopper.out;
  auto unknown = inspect({sm90a.string(), "--gpu", "Voodoo5 6000"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("Voodoo5 6000"), std::string::npos) << unknown.err;
}

TEST(Inspect, StubModulesAreNamedButNotCounted) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("stub.so"));
  const auto result = inspect({library.string(), "--gpu", "8.6"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("1 kernel module;"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("(1 module without kernels not counted"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("runs natively on 8.6 (sm_86): SASS in all 1 kernel module"), std::string::npos)
      << result.out;
}

TEST(Inspect, JsonCarriesArchsGroupsAndVerdict) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  auto result = inspect({library.string(), "--gpu", "12.0", "--json"});
  EXPECT_EQ(result.exit_code, 0);  // the doctor's rule: modules reach 12.0, one for other archs beside them
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("gpu"), "12.0");
  const auto& file = json.at("files").at(0);
  EXPECT_EQ(file.at("modules"), 4);
  EXPECT_EQ(file.at("section"), ".nv_fatbin");
  EXPECT_EQ(file.at("archs").size(), 3u);
  EXPECT_EQ(file.at("archs").at(0).at("arch"), "sm_80");
  EXPECT_EQ(file.at("archs").at(0).at("modules"), 3);
  EXPECT_EQ(json.at("schema_version"), 1);
  EXPECT_EQ(file.at("verdict").at("reach"), "ptx-jit");
  EXPECT_EQ(file.at("verdict").at("native"), 2);
  EXPECT_EQ(file.at("verdict").at("ptx_jit"), 1);
  EXPECT_EQ(file.at("verdict").at("none"), 1);
}

TEST(Inspect, UnreadablePathIsAToolFailure) {
  TORCHFIX_LINUX_ONLY("passes a /path argument, which CLI11 on Windows reads as an option");
  auto result = inspect({"/nonexistent/libx.so", "--gpu", "12.0"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("/nonexistent/libx.so"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "") << "errors go to stderr";
  auto json = inspect({"/nonexistent/libx.so", "--json"});
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_FALSE(nlohmann::json::parse(json.out).at("files").at(0).at("error").get<std::string>().empty());
}

TEST(Inspect, BadGpuSpecIsAToolFailure) {
  auto result = inspect({"/bin/sh", "--gpu", "sm_1x0"});
  EXPECT_EQ(result.exit_code, 2);
}

}  // namespace
}  // namespace torchfix
