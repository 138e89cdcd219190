#include "probe/gpu_parsers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

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

// Returns the number of dotted parts at the start of `text` ("580.159.04"
// has 3, "x" has 0) and sets `length` to the characters they span. Linear:
// probe output is untrusted and may be one very long line.
int dotted_parts(std::string_view text, std::size_t& length) {
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  int parts = 0;
  std::size_t i = 0;
  while (digit(i)) {
    ++parts;
    while (digit(i)) ++i;
    if (i < text.size() && text[i] == '.' && digit(i + 1)) {
      ++i;
    } else {
      break;
    }
  }
  length = i;
  return parts;
}

// Finds the first `label` in `text` followed by optional whitespace and a
// dotted number of at least `min_parts` parts; returns the number's first
// `max_parts` parts. No regex: std::regex recurses per character and
// overflows the stack on a long line.
std::optional<Version> version_after(std::string_view text, std::initializer_list<std::string_view> labels,
                                     int min_parts, int max_parts) {
  std::optional<std::pair<std::size_t, Version>> best;
  for (std::string_view label : labels) {
    for (std::size_t at = text.find(label); at != std::string_view::npos; at = text.find(label, at + 1)) {
      if (best && at >= best->first) break;
      std::size_t i = at + label.size();
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
      std::size_t length = 0;
      const int parts = dotted_parts(text.substr(i), length);
      if (parts < min_parts) continue;
      // Keep max_parts parts: stop before the max_parts-th dot.
      std::size_t end = i;
      for (int seen = 0; end < i + length; ++end) {
        if (text[end] == '.' && ++seen == max_parts) break;
      }
      if (auto version = Version::parse(text.substr(i, end - i))) best = {at, *version};
      break;
    }
  }
  if (!best) return std::nullopt;
  return best->second;
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
  return version_after(text, {"CUDA Version:", "CUDA UMD Version:"}, 2, 2);
}

std::optional<Version> parse_smi_header_driver(std::string_view text) {
  return version_after(text, {"Driver Version:", "KMD Version:"}, 2, 64);
}

std::optional<Version> parse_proc_driver_version(std::string_view text) {
  // The version is the first whitespace-delimited dotted number of two or
  // three parts after "Module"; "x86_64" and "aarch64" hold digits but are
  // not dotted numbers.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  for (std::string_view line : split_lines(text)) {
    if (!line.starts_with("NVRM version:")) continue;
    const auto module = line.find("Module");
    const std::string padded = std::string(line.substr(module == std::string_view::npos ? 0 : module)) + " ";
    for (std::size_t i = 0; i + 1 < padded.size(); ++i) {
      if (!space(padded[i])) continue;
      std::size_t length = 0;
      const int parts = dotted_parts(std::string_view(padded).substr(i + 1), length);
      if (parts >= 2 && parts <= 3 && i + 1 + length < padded.size() && space(padded[i + 1 + length])) {
        return Version::parse(std::string_view(padded).substr(i + 1, length));
      }
    }
    return std::nullopt;
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

namespace {

// The kernel writes space, tab, newline and backslash in mountinfo paths as
// \040, \011, \012 and \134 (fs/proc_namespace.c, mangle()).
std::string unescape_mount_path(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool octal = text[i] == '\\' && i + 3 < text.size() &&
                       text.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos;
    if (octal) {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at < line.size();) {
    const auto end = std::min(line.size(), line.find(' ', at));
    if (end > at) out.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

std::vector<Mount> parse_mountinfo(std::string_view text) {
  std::vector<Mount> out;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.size(), text.find('\n', at));
    const std::vector<std::string_view> w = words(text.substr(at, end - at));
    at = end + 1;
    const auto dash = std::ranges::find(w, std::string_view("-"));
    if (w.size() < 6 || dash == w.end() || dash - w.begin() < 6 || w.end() - dash < 3) continue;
    Mount m{unescape_mount_path(w[4]), unescape_mount_path(w[3]), std::string(dash[1]), unescape_mount_path(dash[2])};
    const bool pseudo =
        std::ranges::any_of(std::initializer_list<std::string_view>{"/proc", "/sys", "/dev"},
                            [&](auto p) { return m.point == p || m.point.starts_with(std::string(p) + "/"); });
    if (!pseudo) out.push_back(std::move(m));
  }
  return out;
}

std::optional<std::string> parse_nv_tegra_release(std::string_view text) {
  // Only the first line carries the release; the file may hold checksums after it.
  const std::string_view line = trim(text.substr(0, text.find('\n')));
  if (!line.starts_with("# R")) return std::nullopt;
  std::string_view rest = line.substr(3);
  const auto digits = rest.find_first_not_of("0123456789");
  const auto release = to_number<int>(rest.substr(0, digits));
  if (!release || *release <= 0) return std::nullopt;
  const auto at = rest.find("REVISION:");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view revision = trim(rest.substr(at + 9));
  revision = revision.substr(0, revision.find_first_of(", "));
  // "4.3" or "2.0"; a revision that is no version makes the line garbled.
  if (revision.empty() || revision.front() == '.' || revision.back() == '.' ||
      revision.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::to_string(*release) + "." + std::string(revision);
}

bool osrelease_names_wsl(std::string_view text) {
  std::string lowered(trim(text));
  std::ranges::transform(lowered, lowered.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lowered.find("microsoft") != std::string::npos || lowered.find("wsl") != std::string::npos;
}

}  // namespace torchfix
