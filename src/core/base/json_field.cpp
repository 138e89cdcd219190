#include "core/base/json_field.hpp"

#include <optional>
#include <vector>

namespace torchfix {
namespace {

using nlohmann::json;
using ErrorOf = std::function<std::string(const json&)>;

// Returns a value of the type nlohmann's "type must be T, but is U" asks for.
std::optional<json> wanted_value(const std::string& error) {
  const std::string tag = "type must be ";
  const auto at = error.find(tag);
  if (at == std::string::npos) return std::nullopt;
  const std::string rest = error.substr(at + tag.size());
  if (rest.starts_with("string")) return json("");
  if (rest.starts_with("number")) return json(0);
  if (rest.starts_with("boolean")) return json(false);
  if (rest.starts_with("array")) return json::array();
  if (rest.starts_with("object")) return json::object();
  return std::nullopt;
}

// One step of the path from `root` down to the node being searched.
struct Step {
  std::string key;  // object key, or empty for an array index
  std::size_t index = 0;
};

json& node_at(json& root, const std::vector<Step>& path) {
  json* node = &root;
  for (const Step& s : path) node = s.key.empty() ? &(*node)[s.index] : &(*node)[s.key];
  return *node;
}

const json& node_at(const json& root, const std::vector<Step>& path) {
  const json* node = &root;
  for (const Step& s : path) node = s.key.empty() ? &node->at(s.index) : &node->at(s.key);
  return *node;
}

// Says whether the error goes when `edit` is applied to the node at `path`
// of a copy of `doc`.
template <typename Edit>
bool goes_away(const json& doc, const std::vector<Step>& path, const std::string& error, const ErrorOf& error_of,
               Edit&& edit) {
  json copy = doc;
  edit(node_at(copy, path));
  return error_of(copy) != error;
}

// Returns the element of the array at `path` whose removal clears the error,
// halving the range each time (a snapshot may hold thousands of rows).
std::optional<std::size_t> culprit_element(const json& doc, const std::vector<Step>& path, const std::string& error,
                                           const ErrorOf& error_of) {
  std::size_t lo = 0;
  std::size_t hi = node_at(doc, path).size();
  const auto erase = [&](std::size_t from, std::size_t to) {
    return goes_away(doc, path, error, error_of, [&](json& a) {
      a.erase(a.begin() + static_cast<std::ptrdiff_t>(from), a.begin() + static_cast<std::ptrdiff_t>(to));
    });
  };
  if (hi == 0 || !erase(lo, hi)) return std::nullopt;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (erase(lo, mid)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return lo;
}

// Returns the key of the object at `path` that explains the error: a scalar
// that reads once it has the wanted type (and the reader then does not
// complain of the value put in), else a container whose removal clears it.
std::optional<std::string> culprit_key(const json& doc, const std::vector<Step>& path, const std::string& error,
                                       const ErrorOf& error_of) {
  const json& object = node_at(doc, path);
  const std::optional<json> wanted = wanted_value(error);
  for (const auto& [key, value] : object.items()) {
    if (value.is_structured()) continue;
    if (!wanted || value.type() == wanted->type()) continue;
    json copy = doc;
    node_at(copy, path)[key] = *wanted;
    const std::string now = error_of(copy);
    if (now != error && now.find(std::string("but is ") + wanted->type_name()) == std::string::npos) return key;
  }
  for (const auto& item : object.items()) {
    if (!item.value().is_structured()) continue;
    const std::string key = item.key();  // a named copy: clang 14 cannot capture a structured binding
    if (goes_away(doc, path, error, error_of, [&](json& o) { o.erase(key); })) return key;
  }
  return std::nullopt;
}

std::string path_text(const std::vector<Step>& path) {
  std::string text;
  for (const Step& s : path) {
    text += s.key.empty() ? "[" + std::to_string(s.index) + "]" : (text.empty() ? "" : ".") + s.key;
  }
  return text;
}

}  // namespace

std::string find_offending_field(const json& doc, const std::string& error, const ErrorOf& error_of) {
  std::vector<Step> path;
  for (;;) {
    const json& node = node_at(doc, path);
    if (node.is_array()) {
      auto i = culprit_element(doc, path, error, error_of);
      if (!i) break;
      path.push_back({{}, *i});
    } else if (node.is_object()) {
      auto key = culprit_key(doc, path, error, error_of);
      if (!key) break;
      path.push_back({*key, 0});
    } else {
      break;
    }
  }
  return path_text(path);
}

}  // namespace torchfix
