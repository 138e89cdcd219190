// Simple-API pages read into torch wheel file names; never trusts the bytes.

#include "core/base/index_page.hpp"

#include "core/base/snapshot_bounds.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

bool torch_wheel(std::string_view name) {
  return name.starts_with("torch-") && name.ends_with(".whl");
}

std::vector<std::string> sorted_unique(std::vector<std::string> names) {
  std::ranges::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 && hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The value of attribute `name` inside one tag's text (`a href="x" ...`), or empty.
std::string_view attribute(std::string_view tag, std::string_view name) {
  std::string lower(tag);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (std::size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
    const bool starts = at > 0 && std::isspace(static_cast<unsigned char>(lower[at - 1]));
    std::size_t i = at + name.size();
    while (i < tag.size() && tag[i] == ' ') ++i;
    if (!starts || i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && tag[i] == ' ') ++i;
    if (i >= tag.size()) return {};
    const char quote = tag[i];
    if (quote == '"' || quote == '\'') {
      const auto end = tag.find(quote, i + 1);
      return end == std::string_view::npos ? std::string_view() : tag.substr(i + 1, end - i - 1);
    }
    const auto end = tag.find_first_of(" \t\r\n", i);
    return tag.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
  }
  return {};
}

}  // namespace

Expected<std::vector<std::string>> parse_pep691_files(std::string_view body) {
  const auto j = parse_json_bounded(body);  // a mirror's bytes: no depth that costs memory
  if (j.is_discarded() || !j.is_object()) return fail("the PEP 691 page is not a JSON object");
  const auto files = j.find("files");
  if (files == j.end() || !files->is_array()) return fail("the PEP 691 page has no \"files\" array");
  std::vector<std::string> out;
  for (const auto& f : *files) {
    if (!f.is_object()) continue;
    const auto name = f.find("filename");
    if (name != f.end() && name->is_string() && torch_wheel(name->get<std::string>()))
      out.push_back(name->get<std::string>());
  }
  return sorted_unique(std::move(out));
}

std::vector<std::string> parse_pep503_files(std::string_view body) {
  std::vector<std::string> out;
  for (std::size_t at = body.find('<'); at != std::string_view::npos; at = body.find('<', at + 1)) {
    if (at + 2 >= body.size() || std::tolower(static_cast<unsigned char>(body[at + 1])) != 'a' ||
        !std::isspace(static_cast<unsigned char>(body[at + 2])))
      continue;
    // A tag ends at the first '>' before the next '<': tags never overlap, so
    // a hostile page of unclosed "<a " costs linear time, not quadratic.
    const auto end = body.find_first_of("<>", at + 1);
    if (end == std::string_view::npos) break;
    if (body[end] == '<') continue;
    std::string_view href = attribute(body.substr(at + 1, end - at - 1), "href");
    href = href.substr(0, href.find('#'));
    while (href.ends_with('/')) href.remove_suffix(1);
    const std::string name = percent_decoded(href.substr(href.rfind('/') + 1));
    if (torch_wheel(name)) out.push_back(name);
  }
  return sorted_unique(std::move(out));
}

Expected<IndexListing> parse_index_page(std::string_view content_type, std::string_view body) {
  if (content_type.find("json") != std::string_view::npos) {
    TF_TRY(files, parse_pep691_files(body));
    return IndexListing{"PEP 691 JSON", std::move(files)};
  }
  return IndexListing{"PEP 503 HTML", parse_pep503_files(body)};
}

}  // namespace torchfix
