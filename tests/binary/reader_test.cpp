// Reads fatbins from objects, libraries, programs, .fatbin and .cubin files
// compiled by the real nvcc, and from corrupt copies of them.
#include "binary/reader.hpp"

#include <gtest/gtest.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif

#include <chrono>
#include <cstring>
#include <fstream>

#include "../support/linux_only.hpp"
#include "binary/elf.hpp"
#include "core/situation/coverage.hpp"
#include "fixtures.hpp"

namespace torchfix::binary {
namespace {

using test::fixture;

using test::groups_of;

FileKernels read_fixture(const std::string& name) {
  auto path = fixture(name);
  if (!path) {
    ADD_FAILURE() << path.error().message;
    return {};
  }
  FileKernels file = read_kernels_file(*path);
  EXPECT_EQ(file.error, "") << name;
  return file;
}

TEST(Reader, Sm80ObjectHoldsOneSassImage) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("sm80.o");
  EXPECT_EQ(file.format, FileFormat::elf);
  EXPECT_EQ(file.section, ".nv_fatbin");
  ASSERT_EQ(file.modules.size(), 1u);
  ASSERT_EQ(file.modules[0].entries.size(), 1u);
  const FatbinEntry& entry = file.modules[0].entries[0];
  EXPECT_EQ(entry.kind, EntryKind::sass);
  EXPECT_EQ(entry.arch.name(), "sm_80");
  EXPECT_FALSE(entry.compressed);
  EXPECT_GT(entry.payload_bytes, 1000u);
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80"});
}

TEST(Reader, ArchSpecificSassKeepsItsVariant) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(groups_of(read_fixture("sm90a.o")), std::vector<std::string>{"1: sm_90a"});
}

TEST(Reader, FamilySpecificSassKeepsItsVariant) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(groups_of(read_fixture("sm100f.o")), std::vector<std::string>{"1: sm_100f"});
}

TEST(Reader, PtxOnlyObjectHoldsCompute120) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("ptx120.o");
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: compute_120"});
  ASSERT_EQ(file.modules.size(), 1u);
  EXPECT_EQ(file.modules[0].entries[0].kind, EntryKind::ptx);
}

TEST(Reader, SassPlusPtxObjectHoldsBoth) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(groups_of(read_fixture("sm120_ptx.o")), std::vector<std::string>{"1: sm_120 compute_120"});
}

TEST(Reader, CompressedEntriesReportBothSizes) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("compressed.o");
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80 sm_120 compute_80"});
  ASSERT_EQ(file.modules.size(), 1u);
  ASSERT_EQ(file.modules[0].entries.size(), 3u);
  for (const FatbinEntry& entry : file.modules[0].entries) {
    EXPECT_TRUE(entry.compressed) << entry.arch.name();
    EXPECT_GT(entry.uncompressed_bytes, entry.payload_bytes) << entry.arch.name();
  }
}

TEST(Reader, RelocatableObjectReadsRelfatbin) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("rdc.o");
  EXPECT_EQ(file.section, "__nv_relfatbin");
  EXPECT_TRUE(file.relocatable.empty());
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80 compute_90"});
}

TEST(Reader, DeviceLinkedProgramCountsOnlyTheLinkedFatbin) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("rdc_exe");
  EXPECT_EQ(file.section, ".nv_fatbin");
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80"});
  EXPECT_EQ(file.relocatable.size(), 2u);  // the two TUs' pre-link copies
}

TEST(Reader, SharedLibraryKeepsOneModulePerTranslationUnit) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("partial.so");
  EXPECT_EQ(file.modules.size(), 4u);
  EXPECT_EQ(groups_of(file), (std::vector<std::string>{"2: sm_80 sm_120", "1: sm_80", "1: compute_90"}));
  const BinaryKernels summary = summarise(file);
  std::vector<std::string> shares;
  for (const ArchShare& share : arch_shares(summary)) {
    shares.push_back(share.arch.name() + "=" + std::to_string(share.modules));
  }
  EXPECT_EQ(shares, (std::vector<std::string>{"sm_80=3", "sm_120=2", "compute_90=1"}));
}

TEST(Reader, NvccLinkStubIsKernelLessAndNotCounted) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("stub.so");
  ASSERT_EQ(file.modules.size(), 2u);  // the TU's module and nvcc's device-link stub
  int stubs = 0;
  for (const Fatbin& module : file.modules) stubs += is_kernel_less(module) ? 1 : 0;
  EXPECT_EQ(stubs, 1);
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80"});
  EXPECT_TRUE(file.has_kernels());
}

TEST(Reader, StandaloneCubinIsOneArchSpecificImage) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("sm90a.cubin");
  EXPECT_EQ(file.format, FileFormat::cubin);
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_90a"});
}

TEST(Reader, StandaloneFatbinFile) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  const FileKernels file = read_fixture("sm80.fatbin");
  EXPECT_EQ(file.format, FileFormat::fatbin);
  EXPECT_EQ(groups_of(file), std::vector<std::string>{"1: sm_80 compute_80"});
}

TEST(Reader, HostOnlyElfHasNoKernels) {
  const FileKernels file = read_kernels_file("/bin/sh");
  EXPECT_EQ(file.error, "");
  EXPECT_FALSE(file.has_kernels());
  EXPECT_TRUE(summarise(file).groups.empty());
}

TEST(Reader, MissingFileIsAnErrorWithItsPath) {
  const FileKernels file = read_kernels_file("/nonexistent/libnothing.so");
  EXPECT_NE(file.error.find("/nonexistent/libnothing.so"), std::string::npos) << file.error;
  EXPECT_NE(file.error.find("No such file"), std::string::npos) << file.error;
}

TEST(Reader, TextFileIsNeitherElfNorFatbin) {
  test::TempDir dir;
  const auto path = dir.path() / "notes.so";
  test::write_bytes(path, {std::byte{'h'}, std::byte{'i'}});
  EXPECT_NE(read_kernels_file(path).error.find("neither an ELF file, a PE file nor a fatbin"), std::string::npos);
}

TEST(Reader, TruncatedLibraryGivesAClearErrorAtEveryLength) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, fixture("partial.so"));
  const auto bytes = test::read_bytes(path);
  ASSERT_GT(bytes.size(), 4096u);
  // Cut the file at many lengths: each read either fails with a message or
  // (when only trailing bytes are gone) succeeds; none crashes or reads past
  // the end (run under TORCHFIX_SANITIZE to check the latter).
  int errors = 0;
  for (std::size_t length = 0; length < bytes.size(); length += 97) {
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    auto read = read_kernels(cut);
    if (!read) {
      EXPECT_FALSE(read.error().message.empty());
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Reader, FatbinSizePastItsSectionIsAnError) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, fixture("sm80.o"));
  auto bytes = test::read_bytes(path);
  auto elf = read_elf(bytes);
  ASSERT_TRUE(elf);
  ASSERT_EQ(elf->fatbin_sections.size(), 1u);
  const ElfSection section = elf->fatbin_sections[0];
  // Claim more entry bytes than the section holds.
  const std::uint64_t huge = section.size * 4;
  std::memcpy(bytes.data() + section.offset + 8, &huge, sizeof huge);
  auto read = read_kernels(bytes);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("section .nv_fatbin"), std::string::npos) << read.error().message;
  EXPECT_NE(read.error().message.find("truncated"), std::string::npos) << read.error().message;
}

TEST(Reader, TruncatedSectionTableIsAnError) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, fixture("sm80.o"));
  auto bytes = test::read_bytes(path);
  bytes.resize(bytes.size() / 3);
  auto read = read_kernels(bytes);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("section header table"), std::string::npos) << read.error().message;
}

TEST(Reader, SectionPastEndOfFileIsAnError) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, fixture("sm80.o"));
  auto bytes = test::read_bytes(path);
  auto elf = read_elf(bytes);
  ASSERT_TRUE(elf);
  const ElfSection section = elf->fatbin_sections.at(0);
  // Find the section header whose sh_offset matches and move it past the end.
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0;
  std::uint16_t shnum = 0;
  std::memcpy(&shoff, bytes.data() + 0x28, 8);
  std::memcpy(&shentsize, bytes.data() + 0x3A, 2);
  std::memcpy(&shnum, bytes.data() + 0x3C, 2);
  bool moved = false;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::byte* header = bytes.data() + shoff + std::uint64_t{i} * shentsize;
    std::uint64_t offset = 0;
    std::memcpy(&offset, header + 0x18, 8);
    if (offset == section.offset) {
      const std::uint64_t beyond = bytes.size() - 8;
      std::memcpy(header + 0x18, &beyond, 8);
      moved = true;
    }
  }
  ASSERT_TRUE(moved);
  auto read = read_kernels(bytes);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("runs past the end"), std::string::npos) << read.error().message;
}

#ifndef _WIN32
TEST(Reader, SparseFileDeclaringAHugeCubinSectionTableIsNotAllocated) {
  TORCHFIX_LINUX_ONLY("measures the peak resident set with getrusage");
  // 4 KB on disk, 4.3 GB long: a fatbin whose uncompressed cubin declares
  // 65535 section headers of 65535 bytes each (4.29 GB), all inside the
  // file. The table was allocated and read: 4.2 GB of RAM.
  test::TempDir dir;
  const std::filesystem::path path = dir.path() / "sparse.fatbin";
  constexpr std::uint64_t k_payload = 4'300'000'000ull;
  std::vector<std::byte> head(16 + 64 + 64);
  auto put = [&](std::size_t at, auto value) { std::memcpy(head.data() + at, &value, sizeof value); };
  put(0, std::uint32_t{0xBA55ED50});  // fatbin magic
  put(4, std::uint16_t{1});
  put(6, std::uint16_t{16});              // header size
  put(8, std::uint64_t{64 + k_payload});  // entries size
  put(16 + 0, std::uint16_t{2});          // entry kind: ELF (SASS)
  put(16 + 4, std::uint32_t{64});         // entry header size
  put(16 + 8, std::uint64_t{k_payload});  // payload size
  put(16 + 28, std::uint32_t{80});        // sm_80
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  std::memcpy(head.data() + 80, ident, sizeof ident);
  put(80 + 0x28, std::uint64_t{64});     // e_shoff
  put(80 + 0x3A, std::uint16_t{65535});  // e_shentsize
  put(80 + 0x3C, std::uint16_t{65535});  // e_shnum
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  }
  std::filesystem::resize_file(path, 16 + 64 + k_payload);
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const long before_kb = usage.ru_maxrss;
  const FileKernels file = read_kernels_file(path);
  ::getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss - before_kb, 64 * 1024)
      << "peak RSS grew by " << (usage.ru_maxrss - before_kb) / 1024 << " MiB reading a 4 KB sparse file";
  EXPECT_EQ(file.error, "");
  ASSERT_EQ(file.modules.size(), 1u);
  ASSERT_EQ(file.modules[0].entries.size(), 1u);
  EXPECT_TRUE(file.modules[0].entries[0].kernel_less);  // no section of it holds code
}
#endif

// Found by tests/fuzz/size_paths_fuzz.cpp (CI, 2026-12-01): an ELF with an
// empty .nv.compat section made the reader ask a stream callback for zero
// bytes through a null span, which a callback passes on to memset/memcpy
// (undefined behaviour). The input is kept as it was found.
TEST(Reader, EmptySectionNeverReachesAStreamCallback) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/fuzz/size-paths-empty-nv-compat.bin",
                   std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(data.size(), 6u);
  // The harness's layout: a mode byte, 5 bytes of declared size, the image
  // (zeros past its end up to the declared size).
  std::uint64_t declared = 0;
  for (int i = 0; i < 5; ++i) declared |= std::uint64_t{static_cast<unsigned char>(data[1 + i])} << (8 * i);
  const std::string image = data.substr(6);
  declared = std::max<std::uint64_t>(declared, image.size());
  int empty_reads = 0;
  const ByteSource stream(declared, [&](std::uint64_t offset, std::span<std::byte> out) {
    if (out.empty()) {
      ++empty_reads;
      return true;
    }
    std::memset(out.data(), 0, out.size());
    if (offset < image.size()) {
      std::memcpy(out.data(), image.data() + offset, std::min<std::uint64_t>(out.size(), image.size() - offset));
    }
    return true;
  });
  (void)read_kernels_headers(stream);  // an error or not: the input is garbage past its headers
  EXPECT_EQ(empty_reads, 0);
}

TEST(Reader, HolesOfASparseFileAreSkippedNotRead) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  // A real fatbin followed by 64 GiB of hole: the padding between fatbins
  // was read 4 KiB at a time (16 million reads).
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(fatbin, fixture("sm80.fatbin"));
  test::TempDir dir;
  const std::filesystem::path path = dir.path() / "holey.fatbin";
  std::filesystem::copy_file(fatbin, path);
  std::filesystem::resize_file(path, 64ull << 30);
  const auto start = std::chrono::steady_clock::now();
  const FileKernels file = read_kernels_file(path);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(file.error, "");
  EXPECT_EQ(groups_of(file), groups_of(read_kernels_file(fatbin)));
}

TEST(Reader, LibelfFreeReaderAgreesWithLibelfOnRealFiles) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  for (const char* name :
       {"partial.so", "sm90a.o", "rdc.o", "sm90a.cubin", "rdc_exe", "stub.so", "compressed.o", "sm100f.o"}) {
    TORCHFIX_FIXTURE(path, test::fixture(name));
    auto bytes = test::read_bytes(path);
    const ByteSource source(std::span<const std::byte>(bytes.data(), bytes.size()));
    auto headers = read_kernels_headers(source);
    ASSERT_TRUE(headers) << name << ": " << headers.error().message;
    const FileKernels with_libelf = read_kernels_file(path);
    ASSERT_EQ(with_libelf.error, "") << name;
    EXPECT_EQ(headers->format, with_libelf.format) << name;
    EXPECT_EQ(headers->section, with_libelf.section) << name;
    ASSERT_EQ(headers->modules.size(), with_libelf.modules.size()) << name;
    EXPECT_EQ(headers->relocatable.size(), with_libelf.relocatable.size()) << name;
    const auto a = summarise(*headers);
    const auto b = summarise(with_libelf);
    ASSERT_EQ(a.groups.size(), b.groups.size()) << name;
    for (std::size_t i = 0; i < a.groups.size(); ++i) EXPECT_EQ(a.groups[i].images, b.groups[i].images) << name;
  }
}

TEST(Reader, RandomByteFlipsNeverCrash) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, fixture("compressed.o"));
  const auto original = test::read_bytes(path);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    auto bytes = original;
    for (int flips = 0; flips < 4; ++flips) {
      bytes[next() % bytes.size()] = static_cast<std::byte>(next() & 0xff);
    }
    if (!read_kernels(bytes)) ++errors;
  }
  // Some flips land in headers the reader checks.
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace torchfix::binary
