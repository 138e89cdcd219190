// The fatbin container parser on hand-built and hostile bytes.
#include "binary/fatbin.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace torchfix::binary {
namespace {

// Builds fatbin bytes field by field (little-endian, as on x86-64 and aarch64).
class Bytes {
 public:
  Bytes& u16(std::uint16_t v) { return put(&v, 2); }
  Bytes& u32(std::uint32_t v) { return put(&v, 4); }
  Bytes& u64(std::uint64_t v) { return put(&v, 8); }
  Bytes& zeros(std::size_t n) {
    m_bytes.resize(m_bytes.size() + n);
    return *this;
  }
  std::vector<std::byte>& get() { return m_bytes; }

 private:
  Bytes& put(const void* v, std::size_t n) {
    const auto at = m_bytes.size();
    m_bytes.resize(at + n);
    std::memcpy(m_bytes.data() + at, v, n);
    return *this;
  }
  std::vector<std::byte> m_bytes;
};

constexpr std::uint64_t k_flags_64bit_linux = 0x11;

// Appends one 64-byte entry header and `payload` zero bytes.
void entry(Bytes& b, std::uint16_t kind, std::uint32_t arch, std::uint64_t flags, std::uint64_t payload,
           std::uint64_t uncompressed = 0) {
  b.u16(kind).u16(0x0101).u32(64).u64(payload).u32(0).u32(0).u16(0).u16(0).u32(arch);
  b.u32(0).u32(0).u64(flags).u64(0).u64(uncompressed).zeros(payload);
}

std::vector<std::byte> one_fatbin(std::uint16_t kind, std::uint32_t arch, std::uint64_t flags) {
  Bytes b;
  b.u32(k_fatbin_magic).u16(1).u16(16).u64(64 + 32);
  entry(b, kind, arch, flags, 32, 100);
  return b.get();
}

TEST(Fatbin, ReadsKindArchAndVariantFlags) {
  Bytes b;
  b.u32(k_fatbin_magic).u16(1).u16(16).u64(4 * (64 + 8));
  entry(b, 2, 90, k_flags_64bit_linux | 0x100000, 8);      // sm_90a
  entry(b, 2, 100, k_flags_64bit_linux | 0x200000, 8);     // sm_100f
  entry(b, 1, 120, k_flags_64bit_linux | 0x8000, 8, 400);  // compute_120, zstd
  entry(b, 2, 75, k_flags_64bit_linux | 0x2000, 8, 300);   // sm_75, LZ4
  auto fatbins = parse_fatbins(b.get(), 4096);
  ASSERT_TRUE(fatbins) << fatbins.error().message;
  ASSERT_EQ(fatbins->size(), 1u);
  const Fatbin& f = (*fatbins)[0];
  EXPECT_EQ(f.offset, 4096u);
  ASSERT_EQ(f.entries.size(), 4u);
  EXPECT_EQ(f.entries[0].arch.name(), "sm_90a");
  EXPECT_EQ(f.entries[1].arch.name(), "sm_100f");
  EXPECT_EQ(f.entries[2].arch.name(), "compute_120");
  EXPECT_EQ(f.entries[2].kind, EntryKind::ptx);
  EXPECT_TRUE(f.entries[2].compressed);
  EXPECT_EQ(f.entries[2].uncompressed_bytes, 400u);
  EXPECT_TRUE(f.entries[3].compressed);
  EXPECT_FALSE(f.entries[0].compressed);
  EXPECT_EQ(f.entries[0].uncompressed_bytes, 8u);
}

TEST(Fatbin, SkipsZeroPaddingBetweenFatbins) {
  auto first = one_fatbin(2, 80, k_flags_64bit_linux);
  auto second = one_fatbin(1, 90, k_flags_64bit_linux);
  std::vector<std::byte> region = first;
  region.resize(region.size() + 24);  // alignment padding
  region.insert(region.end(), second.begin(), second.end());
  region.resize(region.size() + 8);
  auto fatbins = parse_fatbins(region);
  ASSERT_TRUE(fatbins) << fatbins.error().message;
  ASSERT_EQ(fatbins->size(), 2u);
  EXPECT_EQ((*fatbins)[1].offset, first.size() + 24);
  EXPECT_EQ((*fatbins)[1].entries[0].arch.name(), "compute_90");
}

TEST(Fatbin, UnknownEntryKindsAreKeptAsOther) {
  auto bytes = one_fatbin(8, 90, k_flags_64bit_linux);  // LTO IR
  auto fatbins = parse_fatbins(bytes);
  ASSERT_TRUE(fatbins);
  EXPECT_EQ((*fatbins)[0].entries[0].kind, EntryKind::other);
  EXPECT_EQ((*fatbins)[0].entries[0].raw_kind, 8);
}

TEST(Fatbin, EmptyAndAllZeroRegionsHoldNothing) {
  EXPECT_TRUE(parse_fatbins({})->empty());
  std::vector<std::byte> zeros(64);
  EXPECT_TRUE(parse_fatbins(zeros)->empty());
}

TEST(Fatbin, GarbageAfterAFatbinIsAnErrorWithItsOffset) {
  auto bytes = one_fatbin(2, 80, k_flags_64bit_linux);
  const auto end = bytes.size();
  bytes.push_back(std::byte{0x42});
  auto fatbins = parse_fatbins(bytes, 1000);
  ASSERT_FALSE(fatbins);
  EXPECT_NE(fatbins.error().message.find("offset " + std::to_string(1000 + end)), std::string::npos)
      << fatbins.error().message;
}

TEST(Fatbin, HostileSizesAreRejectedWithoutReadingPastTheEnd) {
  struct Case {
    const char* what;
    std::size_t at;       // byte offset of the field to overwrite
    std::uint64_t value;  // new value
    int width;            // field width in bytes
    const char* expect;   // part of the error message
  };
  const Case cases[] = {
      {"fatbin header size 0", 6, 0, 2, "header size 0"},
      {"fatbin header size too big", 6, 0xffff, 2, "header size 65535"},
      {"entries size too big", 8, std::numeric_limits<std::uint64_t>::max(), 8, "claims"},
      {"entry header size 0", 16 + 4, 0, 4, "header size 0"},
      {"entry header size huge", 16 + 4, 0xffffffff, 4, "header size 4294967295"},
      {"entry payload huge", 16 + 8, std::numeric_limits<std::uint64_t>::max(), 8, "payload"},
      {"entry payload one too many", 16 + 8, 33, 8, "payload"},
      {"arch 0", 16 + 28, 0, 4, "arch 0"},
      {"arch huge", 16 + 28, 0xffffffff, 4, "not a CUDA arch"},
  };
  for (const Case& c : cases) {
    auto bytes = one_fatbin(2, 80, k_flags_64bit_linux);
    std::memcpy(bytes.data() + c.at, &c.value, static_cast<std::size_t>(c.width));
    auto fatbins = parse_fatbins(bytes);
    ASSERT_FALSE(fatbins) << c.what;
    EXPECT_NE(fatbins.error().message.find(c.expect), std::string::npos) << c.what << ": " << fatbins.error().message;
  }
}

TEST(Fatbin, EveryTruncationIsAnError) {
  const auto bytes = one_fatbin(1, 120, k_flags_64bit_linux);
  for (std::size_t length = 1; length < bytes.size(); ++length) {
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    EXPECT_FALSE(parse_fatbins(cut)) << "length " << length;
  }
}

TEST(Fatbin, ManyTinyEntriesFinishInLinearTime) {
  // 100k entries of header only: must parse, not hang.
  constexpr std::uint64_t k_entries = 100'000;
  Bytes b;
  b.u32(k_fatbin_magic).u16(1).u16(16).u64(k_entries * 64);
  for (std::uint64_t i = 0; i < k_entries; ++i) entry(b, 2, 80, k_flags_64bit_linux, 0);
  auto fatbins = parse_fatbins(b.get());
  ASSERT_TRUE(fatbins) << fatbins.error().message;
  EXPECT_EQ((*fatbins)[0].entries.size(), k_entries);
}

}  // namespace
}  // namespace torchfix::binary
