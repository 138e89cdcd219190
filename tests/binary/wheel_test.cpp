// Wheels read in place: zips written at test time with libarchive, holding a
// library compiled by nvcc, its dist-info, and corrupt members.
#include "binary/wheel.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#ifndef _WIN32
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#endif

#include <cstring>
#include <future>

#include "../support/linux_only.hpp"
#include "binary/scan.hpp"
#include "fixtures.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;

struct Member {
  std::string name;
  std::vector<std::byte> bytes;
};

std::vector<std::byte> text(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// Writes a zip (deflate, as pip's wheels) holding `members`.
void write_zip(const fs::path& path, const std::vector<Member>& members) {
  archive* zip = archive_write_new();
  ASSERT_EQ(archive_write_set_format_zip(zip), ARCHIVE_OK);
  ASSERT_EQ(archive_write_open_filename(zip, path.string().c_str()), ARCHIVE_OK) << archive_error_string(zip);
  for (const Member& m : members) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, m.name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(m.bytes.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    ASSERT_EQ(archive_write_header(zip, entry), ARCHIVE_OK) << archive_error_string(zip);
    ASSERT_EQ(archive_write_data(zip, m.bytes.data(), m.bytes.size()), static_cast<la_ssize_t>(m.bytes.size()));
    archive_entry_free(entry);
  }
  archive_write_close(zip);
  archive_write_free(zip);
}

std::vector<Member> wheel_members(const fs::path& library) {
  return {
      {"kpkg/__init__.py", text("")},
      {"kpkg/lib/libk.so", test::read_bytes(library)},
      {"kpkg-1.0.dist-info/METADATA", text("Metadata-Version: 2.1\nName: kpkg\nVersion: 1.0\n\n")},
      {"kpkg-1.0.dist-info/RECORD", text("kpkg/__init__.py,,\nkpkg/lib/libk.so,,\nkpkg-1.0.dist-info/RECORD,,\n")},
  };
}

TEST(Wheel, ReadsTheLibraryInPlaceWithTheSameResultAsOnDisk) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  test::TempDir dir;
  const fs::path wheel = dir.path() / "kpkg-1.0-py3-none-linux_x86_64.whl";
  write_zip(wheel, wheel_members(library));
  auto members = read_wheel(wheel);
  ASSERT_TRUE(members) << members.error().message;
  ASSERT_EQ(members->size(), 1u);
  const FileKernels& member = (*members)[0];
  EXPECT_EQ(member.path, wheel.string() + "!kpkg/lib/libk.so");
  EXPECT_EQ(member.error, "");
  const auto on_disk = summarise(read_kernels_file(library));
  const auto in_wheel = summarise(member);
  ASSERT_EQ(in_wheel.groups.size(), on_disk.groups.size());
  for (std::size_t i = 0; i < on_disk.groups.size(); ++i) {
    EXPECT_EQ(in_wheel.groups[i].images, on_disk.groups[i].images);
    EXPECT_EQ(in_wheel.groups[i].modules, on_disk.groups[i].modules);
  }
  // Nothing was unpacked next to the wheel.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(Wheel, StreamedMembersGiveTheSameKernelsAsOnDisk) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  // Limits this low stream the small fixture in many passes over a 4 KiB
  // window, as a 900 MB libtorch_cuda.so is streamed with the defaults.
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  test::TempDir dir;
  const fs::path wheel = dir.path() / "kpkg-1.0-py3-none-linux_x86_64.whl";
  write_zip(wheel, wheel_members(library));
  auto members = read_wheel(wheel, WheelLimits{.in_memory_max = 0, .window = 4096});
  ASSERT_TRUE(members) << members.error().message;
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].error, "");
  const auto on_disk = summarise(read_kernels_file(library));
  const auto streamed = summarise((*members)[0]);
  ASSERT_EQ(streamed.groups.size(), on_disk.groups.size());
  for (std::size_t i = 0; i < on_disk.groups.size(); ++i) {
    EXPECT_EQ(streamed.groups[i].images, on_disk.groups[i].images);
    EXPECT_EQ(streamed.groups[i].modules, on_disk.groups[i].modules);
  }
}

#ifndef _WIN32
// Returns the peak resident set of this process so far, bytes.
std::uint64_t peak_rss() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

TEST(Wheel, AmplifyingMemberIsStreamedNotHeldInMemory) {
  TORCHFIX_LINUX_ONLY("measures the peak resident set with getrusage");
  // A 0.2 MB wheel whose library member inflates to 160 MiB (an ELF header,
  // zeros, a section table at the end): it was read whole into memory.
  constexpr std::uint64_t k_size = 160ull << 20;
  std::vector<std::byte> head(4096);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  std::memcpy(head.data(), ident, sizeof ident);
  auto put = [&](std::vector<std::byte>& b, std::size_t at, auto value) {
    std::memcpy(b.data() + at, &value, sizeof value);
  };
  put(head, 0x10, std::uint16_t{3});             // ET_DYN
  put(head, 0x12, std::uint16_t{62});            // x86-64
  put(head, 0x28, std::uint64_t{k_size - 128});  // e_shoff: two section headers at the very end
  put(head, 0x3A, std::uint16_t{64});
  put(head, 0x3C, std::uint16_t{2});
  put(head, 0x3E, std::uint16_t{1});
  const char names[] = "\0.shstrtab\0";
  std::memcpy(head.data() + 64, names, sizeof names);
  std::vector<std::byte> tail(128);
  put(tail, 64 + 0, std::uint32_t{1});                // sh_name ".shstrtab"
  put(tail, 64 + 4, std::uint32_t{3});                // SHT_STRTAB
  put(tail, 64 + 0x18, std::uint64_t{64});            // sh_offset
  put(tail, 64 + 0x20, std::uint64_t{sizeof names});  // sh_size
  test::TempDir dir;
  const fs::path wheel = dir.path() / "bomb-1.0-py3-none-any.whl";
  {
    archive* zip = archive_write_new();
    ASSERT_EQ(archive_write_set_format_zip(zip), ARCHIVE_OK);
    ASSERT_EQ(archive_write_open_filename(zip, wheel.string().c_str()), ARCHIVE_OK);
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, "bomb/libbomb.so");
    archive_entry_set_size(entry, static_cast<la_int64_t>(k_size));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    ASSERT_EQ(archive_write_header(zip, entry), ARCHIVE_OK);
    archive_write_data(zip, head.data(), head.size());
    const std::vector<std::byte> zeros(1 << 20);
    std::uint64_t written = head.size();
    while (written < k_size - tail.size()) {
      const auto n = std::min<std::uint64_t>(zeros.size(), k_size - tail.size() - written);
      archive_write_data(zip, zeros.data(), n);
      written += n;
    }
    archive_write_data(zip, tail.data(), tail.size());
    archive_entry_free(entry);
    archive_write_close(zip);
    archive_write_free(zip);
  }
  EXPECT_LT(fs::file_size(wheel), 4u << 20);
  const std::uint64_t before = peak_rss();
  auto members = read_wheel(wheel);
  const std::uint64_t grown = peak_rss() - before;
  ASSERT_TRUE(members) << members.error().message;
  EXPECT_TRUE(members->empty());  // an ELF file without kernels
  EXPECT_LT(grown, 64u << 20) << "reading a 160 MiB member grew the peak RSS by " << (grown >> 20) << " MiB";
}

TEST(Wheel, FifoNamedLikeAWheelIsRefusedWithoutBlocking) {
  TORCHFIX_LINUX_ONLY("makes a FIFO (mkfifo)");
  test::TempDir dir;
  const fs::path fifo = dir.path() / "x.whl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto read = std::async(std::launch::async, [&] { return read_path(fifo); });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Unblock the reader so that the test ends.
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    ::close(fd);
    FAIL() << "read_path blocked on a FIFO";
  }
  auto result = read.get();
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("not a regular file"), std::string::npos) << result.error().message;
}
#endif

TEST(Wheel, ReadPathOpensWheelsAndWheelsInsideDirectories) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("sm90a.o"));
  test::TempDir dir;
  fs::create_directories(dir.path() / "sub");
  write_zip(dir.path() / "sub" / "a-1.0-py3-none-any.whl", wheel_members(library));
  auto direct = read_path(dir.path() / "sub" / "a-1.0-py3-none-any.whl");
  ASSERT_TRUE(direct);
  ASSERT_EQ(direct->size(), 1u);
  auto walked = read_path(dir.path());
  ASSERT_TRUE(walked);
  ASSERT_EQ(walked->size(), 1u);
  EXPECT_EQ((*walked)[0].path, (*direct)[0].path);
  EXPECT_EQ(summarise((*walked)[0]).groups.at(0).images.at(0).name(), "sm_90a");
}

TEST(Wheel, CorruptLibraryMemberIsAPerMemberError) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("sm80.o"));
  test::TempDir dir;
  auto members = wheel_members(library);
  auto cut = test::read_bytes(library);
  cut.resize(cut.size() / 3);
  members.push_back({"kpkg/lib/libbroken.so", cut});
  const fs::path wheel = dir.path() / "kpkg.whl";
  write_zip(wheel, members);
  auto read = read_wheel(wheel);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].error, "");
  EXPECT_EQ((*read)[1].path, wheel.string() + "!kpkg/lib/libbroken.so");
  EXPECT_FALSE((*read)[1].error.empty());
}

TEST(Wheel, TruncatedArchiveIsAnErrorNotACrash) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  test::TempDir dir;
  const fs::path wheel = dir.path() / "whole.whl";
  write_zip(wheel, wheel_members(library));
  const auto bytes = test::read_bytes(wheel);
  int failures = 0;
  for (std::size_t length :
       {std::size_t{0}, std::size_t{10}, bytes.size() / 4, bytes.size() / 2, bytes.size() - 30, bytes.size() - 1}) {
    const fs::path cut = dir.path() / ("cut" + std::to_string(length) + ".whl");
    test::write_bytes(cut, std::vector<std::byte>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length)));
    auto read = read_wheel(cut);
    if (!read) {
      EXPECT_NE(read.error().message.find(cut.string()), std::string::npos) << read.error().message;
      ++failures;
    } else {
      for (const auto& m : *read) failures += m.error.empty() ? 0 : 1;
    }
  }
  EXPECT_GE(failures, 4);
}

TEST(Wheel, NotAZipIsAnError) {
  test::TempDir dir;
  const fs::path wheel = dir.path() / "fake.whl";
  test::write_bytes(wheel, text("this is not a zip file at all"));
  auto read = read_wheel(wheel);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("fake.whl"), std::string::npos) << read.error().message;
}

}  // namespace
}  // namespace torchfix::binary
