// Tests of the pure rc edits: fixed cases, then a property test over many
// random rc files (LF/CRLF, with and without a block, with and without a
// final newline, non-ASCII text).
#include "shellenv/rc_edit.hpp"

#include <gtest/gtest.h>

#include <random>

namespace torchfix::shellenv {
namespace {

const std::string k_body = "# why\nexport A='1'\n";

std::string block(std::string_view body, std::string_view eol) {
  std::string out = std::string(k_begin_marker) + std::string(eol);
  std::size_t pos = 0;
  while (pos < body.size()) {
    const std::size_t nl = body.find('\n', pos);
    out += std::string(body.substr(pos, nl - pos)) + std::string(eol);
    pos = nl + 1;
  }
  return out + std::string(k_end_marker);
}

TEST(RcEdit, AppendsToFileWithFinalNewline) {
  auto out = install_block("alias ll='ls -l'\n", k_body);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, "alias ll='ls -l'\n" + block(k_body, "\n") + "\n");
}

TEST(RcEdit, EmptyFileGetsJustTheBlock) {
  auto out = install_block("", k_body);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, block(k_body, "\n") + "\n");
  EXPECT_EQ(*remove_block(*out), "");
}

TEST(RcEdit, FileWithoutFinalNewlineKeepsHavingNone) {
  auto out = install_block("export X=1", k_body);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "export X=1\n" + block(k_body, "\n"));
  EXPECT_EQ(*remove_block(*out), "export X=1");
}

TEST(RcEdit, CrlfFileGetsCrlfBlock) {
  auto out = install_block("a\r\nb\r\n", k_body);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "a\r\nb\r\n" + block(k_body, "\r\n") + "\r\n");
  EXPECT_EQ(*remove_block(*out), "a\r\nb\r\n");
}

TEST(RcEdit, ReplacesExistingBlockInPlace) {
  const std::string rc = "top\n" + block("old\n", "\n") + "\nbottom\n";
  auto out = install_block(rc, k_body);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "top\n" + block(k_body, "\n") + "\nbottom\n");
  auto again = install_block(*out, k_body);
  EXPECT_EQ(*again, *out);
}

TEST(RcEdit, IndentedMarkersAndTrailingBlanksStillMatch) {
  const std::string rc = "x\n  # >>> torchfix >>>  \nold\n\t# <<< torchfix <<<\ny\n";
  auto out = remove_block(rc);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "x\ny\n");
}

TEST(RcEdit, BlockBodyReadsBack) {
  auto rc = install_block("a\r\n", k_body);
  auto body = block_body(*rc);
  ASSERT_TRUE(body && *body);
  EXPECT_EQ(**body, k_body);
  EXPECT_FALSE(*block_body("nothing\n"));
}

TEST(RcEdit, RemoveWithoutBlockChangesNothing) {
  EXPECT_EQ(*remove_block("a\nb"), "a\nb");
  EXPECT_EQ(*remove_block(""), "");
}

TEST(RcEdit, RefusesUnbalancedMarkers) {
  const std::string begin(k_begin_marker), end(k_end_marker);
  for (const std::string& rc :
       {begin + "\nx\n", "x\n" + end + "\n", end + "\n" + begin + "\n", begin + "\n" + begin + "\n" + end + "\n",
        begin + "\n" + end + "\n" + begin + "\n" + end + "\n"}) {
    auto installed = install_block(rc, k_body);
    ASSERT_FALSE(installed) << rc;
    EXPECT_NE(installed.error().message.find("unbalanced"), std::string::npos) << installed.error().message;
    EXPECT_NE(installed.error().message.find("line"), std::string::npos);
    EXPECT_FALSE(remove_block(rc));
  }
}

TEST(RcEdit, RefusesBinaryAndInvalidUtf8) {
  const std::string nul("a\0b\n", 4);
  for (const std::string& rc : {nul, std::string("caf\xE9\n"), std::string("\xC0\xAF\n"), std::string("\xED\xA0\x80\n"),
                                std::string("\xF0\x9F\x98")}) {
    auto out = install_block(rc, k_body);
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().message.find("not text"), std::string::npos) << out.error().message;
    EXPECT_FALSE(remove_block(rc));
  }
  EXPECT_TRUE(check_text("plain, é, 日本, 🚀\n"));
}

TEST(RcEdit, RefusesBodyWithMarkerLine) {
  auto out = install_block("", "x\n# <<< torchfix <<<\ny\n");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("marker"), std::string::npos);
}

TEST(RcEdit, LoneCarriageReturnAtEndOfFileRoundTrips) {
  for (std::string rc : {"x\r", "a\nb\r", "a\r\nb\r", "\r"}) {
    auto once = install_block(rc, k_body);
    ASSERT_TRUE(once);
    EXPECT_EQ(*install_block(*once, k_body), *once) << testing::PrintToString(rc);
    EXPECT_EQ(*remove_block(*once), rc) << testing::PrintToString(rc);
  }
}

// Random rc files: lines drawn from a pool with shell syntax, non-ASCII text,
// blanks, lookalike markers and stray '\r'; LF or CRLF; final newline or not;
// sometimes a torchfix block somewhere.
class RandomRc {
 public:
  explicit RandomRc(unsigned seed) : m_rng(seed) {}

  std::string file(bool& has_block) {
    static const std::vector<std::string> pool = {
        "export PATH=\"$HOME/bin:$PATH\"",
        "alias ll='ls -alF'",
        "",
        "   ",
        "# comment é ü 日本語 🚀",
        "if [ -f ~/.bash_aliases ]; then",
        "fi",
        "PS1='\\u@\\h:\\w\\$ '",
        "# >>> conda initialize >>>",
        "# <<< conda initialize <<<",
        "# >>> torchfix",
        "#>>> torchfix >>>",
        "echo '# >>> torchfix >>>'",
        "x=\"a\\\\b\"",
        "\t",
        "stray\rcarriage",
        "ends with cr\r",
        "Ωmega",
    };
    const bool crlf = coin();
    const std::string eol = crlf ? "\r\n" : "\n";
    const int n = static_cast<int>(pick(8));
    const int block_at = coin() ? static_cast<int>(pick(static_cast<std::size_t>(n) + 1)) : -1;
    has_block = block_at >= 0;
    std::string out;
    for (int i = 0; i <= n; ++i) {
      if (i == block_at) out += block(coin() ? "old body\n" : "", eol) + eol;
      if (i < n) out += pool[pick(pool.size())] + eol;
    }
    if (coin() && !out.empty()) {
      // Drop the final newline (and sometimes end on a lone '\r').
      out.resize(out.size() - eol.size());
      if (coin()) out += '\r';
    }
    return out;
  }

 private:
  bool coin() { return std::uniform_int_distribution<int>(0, 1)(m_rng) == 1; }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(m_rng); }
  std::mt19937 m_rng;
};

TEST(RcEditProperty, InstallUninstallRoundTripsAndIsIdempotent) {
  RandomRc gen(20261129);
  int with_block = 0;
  for (int i = 0; i < 3000; ++i) {
    bool has_block = false;
    const std::string rc = gen.file(has_block);
    with_block += has_block;
    SCOPED_TRACE(testing::PrintToString(rc));
    auto installed = install_block(rc, k_body);
    ASSERT_TRUE(installed) << installed.error().message;
    auto twice = install_block(*installed, k_body);
    ASSERT_TRUE(twice);
    EXPECT_EQ(*twice, *installed);  // idempotent
    auto body = block_body(*installed);
    ASSERT_TRUE(body && *body);
    EXPECT_EQ(**body, k_body);
    auto removed = remove_block(*installed);
    ASSERT_TRUE(removed);
    auto removed_original = remove_block(rc);
    ASSERT_TRUE(removed_original);
    EXPECT_EQ(*removed, *removed_original);
    if (!has_block) {
      EXPECT_EQ(*removed, rc);  // round trip to the original bytes
    } else {
      // Outside the block nothing moved: the text before the old block is a
      // prefix of the new file.
      const std::size_t at = rc.find(k_begin_marker);
      EXPECT_EQ(installed->substr(0, at), rc.substr(0, at));
    }
    EXPECT_EQ(*remove_block(*removed), *removed);
  }
  EXPECT_GT(with_block, 1000);
  EXPECT_LT(with_block, 2000);
}

}  // namespace
}  // namespace torchfix::shellenv
