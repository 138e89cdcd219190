// Reads fatbins from Windows PE images (.pyd/.dll) and COFF objects that the
// test writes around real nvcc fatbins with a minimal PE generator, and (opt-in)
// from a real Windows CUDA DLL of a PyPI win_amd64 wheel.
#include "binary/pe.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "../support/linux_only.hpp"
#include "../support/pe_image.hpp"
#include "binary/reader.hpp"
#include "binary/scan.hpp"
#include "binary/wheel.hpp"
#include "fixtures.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;
using test::fixture;

using testing::pe::make_pe;
using testing::pe::PeKind;
using testing::pe::Section;

std::vector<std::byte> filler(std::size_t n) {
  return std::vector<std::byte>(n, std::byte{0xCC});
}

using test::groups_of;

// Returns the bytes of the .nv_fatbin section of a real nvcc-built ELF library.
std::vector<std::byte> elf_fatbin_section(const fs::path& library) {
  auto bytes = test::read_bytes(library);
  auto elf = read_elf(std::span<std::byte>(bytes));
  if (!elf) return {};
  for (const ElfSection& s : elf->fatbin_sections) {
    if (s.name == k_fatbin_section) {
      return {bytes.begin() + static_cast<std::ptrdiff_t>(s.offset),
              bytes.begin() + static_cast<std::ptrdiff_t>(s.offset + s.size)};
    }
  }
  return {};
}

TEST(Pe, DllWrappingARealFatbinReadsItsArchs) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(fatbin, fixture("sm80.fatbin"));
  test::TempDir dir;
  const fs::path dll = dir.path() / "_C.cp312-win_amd64.pyd";
  test::write_bytes(dll, make_pe({{".text", filler(700)}, {".nv_fatb", test::read_bytes(fatbin)}}, PeKind::image));
  const FileKernels file = read_kernels_file(dll);
  ASSERT_EQ(file.error, "");
  EXPECT_EQ(file.format, FileFormat::pe);
  EXPECT_EQ(file.section, ".nv_fatbin");
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80 compute_80"});
  // The streamed reader (wheel members) agrees.
  auto image = test::read_bytes(dll);
  auto streamed = read_kernels_headers(ByteSource(std::span<const std::byte>(image)));
  ASSERT_TRUE(streamed) << streamed.error().message;
  EXPECT_EQ(groups_of(*streamed), groups_of(file));
}

TEST(Pe, DllHoldingALibrarysWholeFatbinSectionMatchesTheElf) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, fixture("partial.so"));
  const auto section = elf_fatbin_section(library);
  ASSERT_FALSE(section.empty());
  test::TempDir dir;
  const fs::path dll = dir.path() / "partial.dll";
  test::write_bytes(dll,
                    make_pe({{".text", filler(100)}, {".nv_fatb", section}, {".rsrc", filler(30)}}, PeKind::image));
  const FileKernels pe = read_kernels_file(dll);
  ASSERT_EQ(pe.error, "");
  EXPECT_EQ(groups_of(pe), groups_of(read_kernels_file(library)));
  EXPECT_EQ(pe.modules.size(), 4u);
}

TEST(Pe, CoffObjectWithALongSectionName) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(fatbin, fixture("sm80.fatbin"));
  const auto bytes = make_pe({{".text$mn", filler(16)}, {".nv_fatbin", test::read_bytes(fatbin)}}, PeKind::object);
  auto copy = bytes;
  auto file = read_kernels(copy);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->format, FileFormat::pe);
  EXPECT_EQ(groups_of(*file), std::vector<std::string>{"1: sm_80 compute_80"});
}

TEST(Pe, HostOnlyDllAndDosProgramHoldNoKernels) {
  auto host = make_pe({{".text", filler(100)}, {".rdata", filler(20)}}, PeKind::image);
  auto file = read_kernels(host);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(file->has_kernels());
  std::vector<std::byte> dos(200, std::byte{0});
  dos[0] = std::byte{'M'};
  dos[1] = std::byte{'Z'};
  auto program = read_kernels(dos);
  ASSERT_TRUE(program) << program.error().message;
  EXPECT_FALSE(program->has_kernels());
}

TEST(Pe, SectionPastTheEndIsAnErrorAndEveryCutIsSafe) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(fatbin, fixture("sm80.fatbin"));
  const auto whole = make_pe({{".text", filler(64)}, {".nv_fatb", test::read_bytes(fatbin)}}, PeKind::image);
  auto cut = std::vector<std::byte>(whole.begin(), whole.end() - 600);
  auto file = read_kernels(cut);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("runs past the end"), std::string::npos) << file.error().message;
  int errors = 0;
  for (std::size_t length = 0; length < whole.size(); length += 37) {
    std::vector<std::byte> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(length));
    if (!read_kernels(part)) ++errors;
    (void)read_kernels_headers(ByteSource(std::span<const std::byte>(part)));
  }
  EXPECT_GT(errors, 0);
}

TEST(Pe, SitePackagesScanReadsPydListedInRecord) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(fatbin, fixture("sm80.fatbin"));
  test::TempDir dir;
  const fs::path site = dir.path() / "Lib" / "site-packages";
  fs::create_directories(site / "ext");
  fs::create_directories(site / "ext-1.0.dist-info");
  test::write_bytes(site / "ext" / "_C.cp312-win_amd64.pyd",
                    make_pe({{".nv_fatb", test::read_bytes(fatbin)}}, PeKind::image));
  std::ofstream(site / "ext-1.0.dist-info" / "METADATA") << "Name: ext\nVersion: 1.0\n\n";
  std::ofstream(site / "ext-1.0.dist-info" / "RECORD") << "ext/_C.cp312-win_amd64.pyd,,\next-1.0.dist-info/RECORD,,\n";
  const auto packages = scan_site_packages(site);
  ASSERT_EQ(packages.size(), 1u);
  EXPECT_EQ(packages[0].distribution, "ext");
  ASSERT_EQ(packages[0].binaries.size(), 1u);
  EXPECT_EQ(packages[0].binaries[0].error, "");
}

// Opt-in: TORCHFIX_WIN_WHEEL_DIR holds nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl
// (pip download --platform win_amd64 --no-deps --only-binary=:all: nvidia-nvjpeg-cu12==12.4.0.76 -d DIR;
// 4.7 MB). Its nvjpeg64_12.dll keeps 11 fatbins in `.nv_fatb` (6107768 bytes), each
// with sm_50..sm_121 SASS and 10 with compute_121 PTX (counted from the fatbin
// headers by an independent Python script, docs/extensions.md).
TEST(Pe, RealWindowsCudaDllFromAPypiWheel) {
  const char* dir = std::getenv("TORCHFIX_WIN_WHEEL_DIR");
  const fs::path wheel = fs::path(dir ? dir : "") / "nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl";
  if (!dir || !fs::is_regular_file(wheel)) {
    GTEST_SKIP() << "set TORCHFIX_WIN_WHEEL_DIR to a folder with " << wheel.filename()
                 << " (pip download --platform win_amd64 --no-deps --only-binary=:all: nvidia-nvjpeg-cu12==12.4.0.76)";
  }
  auto members = read_wheel(wheel);
  ASSERT_TRUE(members) << members.error().message;
  ASSERT_EQ(members->size(), 1u);
  const FileKernels& dll = members->front();
  EXPECT_TRUE(dll.path.ends_with("!nvidia/nvjpeg/bin/nvjpeg64_12.dll")) << dll.path;
  EXPECT_EQ(dll.error, "");
  EXPECT_EQ(dll.format, FileFormat::pe);
  EXPECT_EQ(dll.modules.size(), 11u);
  const auto groups = groups_of(dll);
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.front(),
            "10: sm_50 sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_101 sm_103 sm_120 sm_121 "
            "compute_121");
}

// The import directory of images the test makes: the DLLs Windows' loader
// loads with them, in file order; a COFF object has none to give.
TEST(Pe, ImportDirectoryNamesTheDllsTheLoaderLoads) {
  const auto dll = make_pe({{".text", filler(300)}}, PeKind::image, {"VCRUNTIME140_1.dll", "c10.dll", "KERNEL32.dll"});
  auto imports = read_pe_imports(ByteSource(std::span<const std::byte>(dll)));
  ASSERT_TRUE(imports) << imports.error().message;
  EXPECT_EQ(*imports, (std::vector<std::string>{"VCRUNTIME140_1.dll", "c10.dll", "KERNEL32.dll"}));
  const auto none = make_pe({{".text", filler(300)}}, PeKind::image);
  imports = read_pe_imports(ByteSource(std::span<const std::byte>(none)));
  ASSERT_TRUE(imports) << imports.error().message;
  EXPECT_TRUE(imports->empty());
  const auto object = make_pe({{".text", filler(16)}}, PeKind::object);
  EXPECT_FALSE(read_pe_imports(ByteSource(std::span<const std::byte>(object))));
}

TEST(Pe, ImportDirectoryCutAnywhereIsAnErrorNeverARead) {
  const auto whole = make_pe({{".text", filler(64)}}, PeKind::image, {"VCRUNTIME140.dll", "MSVCP140.dll"});
  int errors = 0;
  for (std::size_t length = 0; length < whole.size(); length += 7) {
    std::vector<std::byte> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(length));
    if (!read_pe_imports(ByteSource(std::span<const std::byte>(part)))) ++errors;
  }
  EXPECT_GT(errors, 0);
  // A name RVA pointing past every section is an error, not a read.
  auto broken = whole;
  const auto imports_rva = load_le<std::uint32_t>(std::span<const std::byte>(broken), 0x44 + 20 + 120);
  testing::pe::put32(broken, imports_rva + 12, 0x7fffffff);
  EXPECT_FALSE(read_pe_imports(ByteSource(std::span<const std::byte>(broken))));
}

// The real nvjpeg64_12.dll of NVIDIA's win_amd64 wheel (see above) imports
// KERNEL32.dll alone (`objdump -p` of binutils 2.40 lists the same "DLL
// Name"); the member is taken out of the wheel with Python's zipfile.
TEST(Pe, RealWindowsCudaDllImportsOnlyKernel32) {
  TORCHFIX_LINUX_ONLY("extracts the wheel member with python3");
  const char* dir = std::getenv("TORCHFIX_WIN_WHEEL_DIR");
  const fs::path wheel = fs::path(dir ? dir : "") / "nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl";
  if (!dir || !fs::is_regular_file(wheel))
    GTEST_SKIP() << "set TORCHFIX_WIN_WHEEL_DIR (see RealWindowsCudaDllFromAPypiWheel)";
  test::TempDir out;
  const std::string extract =
      "python3 -c \"import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("
      "'nvidia/nvjpeg/bin/nvjpeg64_12.dll', sys.argv[2])\" '" +
      wheel.string() + "' '" + out.path().string() + "'";
  ASSERT_EQ(std::system(extract.c_str()), 0) << extract;
  const auto bytes = test::read_bytes(out.path() / "nvidia/nvjpeg/bin/nvjpeg64_12.dll");
  auto imports = read_pe_imports(ByteSource(std::span<const std::byte>(bytes)));
  ASSERT_TRUE(imports) << imports.error().message;
  EXPECT_EQ(*imports, std::vector<std::string>{"KERNEL32.dll"});
}

}  // namespace
}  // namespace torchfix::binary
