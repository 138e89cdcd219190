#include "probe/gpu_parsers.hpp"

#include <algorithm>
#include <charconv>
#include <regex>

namespace torchfix {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const auto comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return fields;
}

// nvidia-smi prints "[N/A]", "[Not Supported]", "[Unknown Error]" (and "N/A"
// in old versions) for fields it cannot read.
bool smi_unavailable(std::string_view field) {
  return field.empty() || field.front() == '[' || field == "N/A";
}

template <typename T>
std::optional<T> to_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<Version> version_after(std::string_view text, const std::regex& pattern) {
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(text.begin(), text.end(), match, pattern)) return std::nullopt;
  return Version::parse(std::string_view(match[1].first, match[1].second));
}

}  // namespace

Expected<std::vector<SmiGpuRow>> parse_smi_gpu_csv(std::string_view text, const std::vector<std::string>& fields) {
  std::vector<SmiGpuRow> rows;
  bool first = true;
  for (std::string_view raw : split_lines(text)) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const auto values = split_fields(line);
    const bool header =
        first && std::ranges::equal(values, fields, [](std::string_view value, const std::string& field) {
          // Headers carry units even with nounits: "memory.total [MiB]".
          return trim(value.substr(0, value.find(" ["))) == field;
        });
    first = false;
    if (header) continue;
    const std::string quoted = "nvidia-smi printed '" + std::string(line) + "': ";
    if (values.size() != fields.size()) {
      return fail(quoted + "expected " + std::to_string(fields.size()) + " comma-separated fields");
    }
    SmiGpuRow row;
    row.index = static_cast<int>(rows.size());
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string& field = fields[i];
      std::string_view value = values[i];
      if (smi_unavailable(value)) continue;
      if (field == "index") {
        const auto index = to_number<int>(value);
        if (!index) return fail(quoted + "GPU index is not a number");
        row.index = *index;
      } else if (field == "name" || field == "gpu_name") {
        row.name = std::string(value);
      } else if (field == "compute_cap") {
        auto cc = ComputeCapability::parse(value);
        if (!cc) return fail(quoted + cc.error().message);
        row.cc = *cc;
      } else if (field == "driver_version") {
        row.driver = Version::parse(value);
      } else if (field == "memory.total") {
        if (value.ends_with("MiB")) value = trim(value.substr(0, value.size() - 3));
        if (const auto mib = to_number<std::uint64_t>(value)) row.memory_bytes = *mib * 1024 * 1024;
      }
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return fail("nvidia-smi printed no GPU line");
  return rows;
}

bool smi_rejected_field(std::string_view output) {
  return output.find("is not a valid field to query") != std::string_view::npos;
}

std::optional<Version> parse_smi_header_cuda(std::string_view text) {
  static const std::regex pattern(R"(CUDA (?:UMD )?Version:\s*([0-9]+\.[0-9]+))");
  return version_after(text, pattern);
}

std::optional<Version> parse_smi_header_driver(std::string_view text) {
  static const std::regex pattern(R"((?:Driver|KMD) Version:\s*([0-9]+(?:\.[0-9]+)+))");
  return version_after(text, pattern);
}

std::optional<Version> parse_proc_driver_version(std::string_view text) {
  // The version is the first whitespace-delimited dotted number after
  // "Module"; "x86_64" and "aarch64" hold digits but are not dotted numbers.
  static const std::regex number(R"(\s([0-9]+\.[0-9]+(?:\.[0-9]+)?)\s)");
  for (std::string_view line : split_lines(text)) {
    if (!line.starts_with("NVRM version:")) continue;
    const std::string padded = std::string(line) + " ";
    const auto module = padded.find("Module");
    return version_after(std::string_view(padded).substr(module == std::string::npos ? 0 : module), number);
  }
  return std::nullopt;
}

std::optional<Version> parse_module_version(std::string_view text) {
  return Version::parse(trim(text));
}

std::string parse_os_release_pretty_name(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    line = trim(line);
    if (!line.starts_with("PRETTY_NAME=")) continue;
    std::string_view value = line.substr(12);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    return std::string(value);
  }
  return {};
}

std::optional<std::uint64_t> parse_meminfo_available(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::string_view value = trim(line.substr(13));
    const auto space = value.find(' ');
    const std::string_view unit = space == std::string_view::npos ? "" : trim(value.substr(space));
    const auto number = to_number<std::uint64_t>(value.substr(0, space));
    if (!number) return std::nullopt;
    return unit == "kB" ? *number * 1024 : *number;
  }
  return std::nullopt;
}

bool cgroup_names_container(std::string_view text) {
  for (std::string_view word : {"docker", "containerd", "kubepods", "lxc", "libpod"}) {
    if (text.find(word) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace torchfix
