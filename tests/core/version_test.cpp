#include "core/base/version.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

TEST(Version, ParsesLeadingDottedNumbers) {
  EXPECT_EQ(Version::parse("12.2.0-14")->str(), "12.2.0");
  EXPECT_EQ(Version::parse("2.6.0+cu126")->str(), "2.6.0");
  EXPECT_EQ(Version::parse("580.65.06")->str(), "580.65.06");  // keeps leading zeros for display
  EXPECT_EQ(Version::parse("13.")->str(), "13");
  EXPECT_FALSE(Version::parse("v13"));
  EXPECT_FALSE(Version::parse(""));
}

TEST(Version, ComparesNumericallyWithMissingPartsAsZero) {
  EXPECT_LT(*Version::parse("525.60.13"), *Version::parse("525.85.12"));
  EXPECT_LT(*Version::parse("9.4"), *Version::parse("12.2"));
  EXPECT_EQ(*Version::parse("12.8"), *Version::parse("12.8.0"));
  EXPECT_GT(*Version::parse("580.159.04"), *Version::parse("580.65.06"));
}

TEST(Version, ConvertsCudaIntegers) {
  EXPECT_EQ(Version::from_cuda_int(13000).major_minor(), "13.0");
  EXPECT_EQ(Version::from_cuda_int(12080).major_minor(), "12.8");
  EXPECT_EQ(Version::from_cuda_int(11040).major_minor(), "11.4");
}

}  // namespace
}  // namespace torchfix
