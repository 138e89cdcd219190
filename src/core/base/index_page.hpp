#pragma once
// Simple-API project pages (PEP 691 JSON, PEP 503 HTML) read into the torch
// wheel file names they list: untrusted bytes from an index or a mirror
// (tests/fuzz/index_page_fuzz.cpp). Pure; core/resolver/wheel_index.hpp judges the names.

#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"

namespace torchfix {

/// Holds the wheel files a simple-API page lists and the form it came in.
struct IndexListing {
  std::string format;              // "PEP 691 JSON" or "PEP 503 HTML"
  std::vector<std::string> files;  // torch-*.whl file names, sorted, without duplicates
};

/// Returns the torch wheel file names of a PEP 691 JSON project page (its
/// "files"[].filename). Errors: not JSON, or no "files" array.
Expected<std::vector<std::string>> parse_pep691_files(std::string_view body);

/// Returns the torch wheel file names of a PEP 503 HTML project page: the
/// last path segment of each anchor's href (percent-decoded, without the
/// #sha256 fragment). Never fails; a page without anchors lists nothing.
std::vector<std::string> parse_pep503_files(std::string_view body);

/// Reads a project page by its Content-Type: PEP 691 JSON when it names
/// json, else PEP 503 HTML. Errors: a JSON page that does not parse.
Expected<IndexListing> parse_index_page(std::string_view content_type, std::string_view body);

}  // namespace torchfix
