#pragma once
// Dotted version numbers (driver 580.159.04, nvcc 13.0.88, gcc 12.2.0, torch 2.6.0+cu126).

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchfix {

/// Holds a dotted numeric version; missing components compare as 0
/// (so 12.8 == 12.8.0). Leading zeros are kept only for display ("580.65.06").
class Version {
 public:
  Version() = default;
  explicit Version(std::vector<int> parts, std::string text = {});

  /// Parses the leading "N(.N)*" of `text` ("12.2.0-14" -> 12.2.0); nullopt when
  /// `text` does not start with a digit.
  static std::optional<Version> parse(std::string_view text);

  /// Returns the CUDA version a PyTorch index variant names ("cu128" -> 12.8,
  /// "cu118" -> 11.8); nullopt for "cpu", "rocm6.2", "xpu" or anything else.
  static std::optional<Version> from_cuda_variant(std::string_view variant);

  /// Converts a CUDA version integer as returned by cuDriverGetVersion and
  /// nvmlSystemGetCudaDriverVersion (1000*major + 10*minor, e.g. 13000) to 13.0.
  static Version from_cuda_int(int value);

  int major() const { return part(0); }
  int minor() const { return part(1); }
  /// Returns component `i`, or 0 when absent.
  int part(std::size_t i) const { return i < m_parts.size() ? m_parts[i] : 0; }
  const std::vector<int>& parts() const { return m_parts; }
  bool empty() const { return m_parts.empty(); }

  /// Returns the text it was parsed from, or the components joined by '.'.
  std::string str() const;
  /// Returns "major.minor" ("13.0").
  std::string major_minor() const;

  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::vector<int> m_parts;
  std::string m_text;
};

}  // namespace torchfix
