#include "binary/installs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "binary/source.hpp"
#include "core/base/text.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// RECORD of torch 2.6 is 1 MB; METADATA's header block a few KB; a conda-meta
// record of pytorch lists about 20000 files (3 MB).
constexpr std::size_t k_record_max_bytes = 64u << 20;
constexpr std::size_t k_small_max_bytes = 1u << 20;
constexpr std::size_t k_conda_meta_max_bytes = 32u << 20;
constexpr std::size_t k_tree_entries_max = 200000;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string read_small(const fs::path& path, std::size_t max = k_small_max_bytes) {
  auto text = read_regular_file(path, max);
  return text ? std::move(*text) : std::string{};
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// Returns the first field of a RECORD line (CSV; quoted with doubled quotes).
std::string record_path(std::string_view line) {
  if (line.empty() || line.front() != '"') return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] != '"') {
      out += line[i];
    } else if (i + 1 < line.size() && line[i + 1] == '"') {
      out += '"';
      ++i;
    } else {
      break;
    }
  }
  return out;
}

// Fills name, version, local version and torch pins from a METADATA or PKG-INFO header block.
void read_metadata(const fs::path& metadata, PackageKernels& package) {
  const std::string text = read_small(metadata);
  for (std::string_view line : lines_of(text)) {
    if (line.empty()) break;
    if (line.starts_with("Name: ")) package.distribution = line.substr(6);
    if (line.starts_with("Version: ")) package.version = line.substr(9);
    if (line.starts_with("Requires-Dist: ")) {
      const std::string_view req = line.substr(15);
      const auto end = req.find_first_of(" <>=!~;[(");
      const std::string name = normalise_distribution(req.substr(0, end));
      if (name == "torch") package.provenance.torch_pins.push_back(trimmed(req));
      if (name == "triton" || name == "pytorch-triton") package.provenance.triton_pins.push_back(trimmed(req));
    }
  }
  if (const auto plus = package.version.find('+'); plus != std::string::npos) {
    package.provenance.local_version = package.version.substr(plus + 1);
  }
}

// Returns the CUDA major a "cu121"/"cu118" local version or a "-cu12"/"-cuda12x" name says.
std::optional<int> cuda_major_of(const PackageKernels& package) {
  auto digits_after = [](std::string_view text, std::string_view tag) -> std::optional<int> {
    const auto at = text.find(tag);
    if (at == std::string_view::npos) return std::nullopt;
    std::size_t i = at + tag.size();
    std::string digits;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) digits += text[i++];
    if (digits.size() == 3 || digits.size() == 4) return std::stoi(digits.substr(0, digits.size() - 1));
    if (digits.size() == 2 && (i == text.size() || text[i] == 'x' || text[i] == '-')) return std::stoi(digits);
    return std::nullopt;
  };
  if (auto m = digits_after(package.provenance.local_version, "cu")) return m;
  const std::string name = normalise_distribution(package.distribution);
  if (auto m = digits_after(name, "-cuda")) return m;
  return digits_after(name, "-cu");
}

// Adds every shared library under `root` to `out` (hidden folders, __pycache__
// and node_modules skipped; the walk ends after k_tree_entries_max entries).
void walk_tree(const fs::path& root, std::vector<fs::path>& out) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  std::size_t entries = 0;
  for (; !ec && it != fs::recursive_directory_iterator() && ++entries < k_tree_entries_max; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (it->is_symlink(type_ec)) continue;
    if (it->is_directory(type_ec)) {
      if (name.starts_with('.') || name == "__pycache__" || name == "node_modules") it.disable_recursion_pending();
      continue;
    }
    if (is_shared_library_name(name) && it->is_regular_file(type_ec)) out.push_back(it->path());
  }
}

// Returns the arch-setting nvcc flags of a setup.py (the string literal
// around "-gencode", "arch=compute_", "-arch=sm_", "--generate-code") and the
// *_CUDA_ARGS / NVCC_FLAGS variables it reads, at most 8, in file order.
std::vector<std::string> setup_py_arch_flags(const std::string& text) {
  std::vector<std::string> out;
  auto add = [&](std::string flag) {
    if (!flag.empty() && out.size() < 8 && std::ranges::find(out, flag) == out.end()) out.push_back(std::move(flag));
  };
  for (std::string_view line : lines_of(text)) {
    line = line.substr(0, line.find('#'));
    // Every string literal of the line that holds a marker, joined: a list
    // ["-gencode", "arch=compute_80,code=sm_80"] or one literal split later.
    std::string flags;
    for (std::size_t open = line.find_first_of("'\""); open != std::string_view::npos;) {
      const auto close = line.find(line[open], open + 1);
      if (close == std::string_view::npos) break;
      const std::string_view literal = line.substr(open + 1, close - open - 1);
      for (std::string_view marker : {"-gencode", "--generate-code", "arch=compute_", "-arch=sm_", "-arch=compute_"}) {
        if (literal.find(marker) == std::string_view::npos) continue;
        flags += (flags.empty() ? "" : " ") + trimmed(literal);
        break;
      }
      open = line.find_first_of("'\"", close + 1);
    }
    add(std::move(flags));
    for (std::size_t at = line.find("CUDA_ARGS"); at != std::string_view::npos; at = line.find("CUDA_ARGS", at + 1)) {
      std::size_t begin = at;
      while (begin > 0 && (std::isupper(static_cast<unsigned char>(line[begin - 1])) || line[begin - 1] == '_'))
        --begin;
      add(std::string(line.substr(begin, at + 9 - begin)));
    }
  }
  return out;
}

// Adds the libraries of an editable install: those on its import paths (in
// place), else those of the project's build/lib*/ folders.
void add_editable_tree(const std::vector<fs::path>& import_roots, const fs::path& project, Installed& installed) {
  std::vector<fs::path> found;
  for (const fs::path& root : import_roots) walk_tree(root, found);
  std::error_code ec;
  if (found.empty() && !project.empty()) {
    for (const auto& entry : fs::directory_iterator(project / "build", ec)) {
      if (entry.path().filename().string().starts_with("lib")) walk_tree(entry.path(), found);
    }
  }
  std::ranges::sort(found);
  if (!project.empty()) installed.package.provenance.arch_flags = setup_py_arch_flags(read_small(project / "setup.py"));
  installed.package.provenance.editable_root = project.empty() ? import_roots.front().string() : project.string();
  for (fs::path& path : found) installed.libraries.push_back({std::move(path), {}});
}

// Returns the path of a file:// URL ("file:///src/x" -> "/src/x"), or empty.
fs::path file_url_path(const std::string& url) {
  if (!url.starts_with("file://")) return {};
  std::string path;
  const std::string rest = url.substr(7);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size()) {
      path += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return path;
}

// Returns the folders a PEP 660 finder module maps import packages to (its
// `MAPPING = {'pkg': '/src/pkg'}` line, a Python dict literal of strings).
std::vector<fs::path> finder_mapping(const fs::path& finder) {
  std::vector<fs::path> out;
  const std::string text = read_small(finder);
  for (std::string_view line : lines_of(text)) {
    if (!line.starts_with("MAPPING")) continue;
    std::vector<std::string> strings;
    for (std::size_t i = line.find('{'); i != std::string_view::npos && i < line.size(); ++i) {
      if (line[i] != '\'' && line[i] != '"') continue;
      const char quote = line[i];
      std::string text;
      for (++i; i < line.size() && line[i] != quote; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        text += line[i];
      }
      strings.push_back(std::move(text));
    }
    for (std::size_t k = 1; k < strings.size(); k += 2) out.emplace_back(strings[k]);
    break;
  }
  return out;
}

// Returns the import package a RECORD line makes its distribution own: a
// top-level module (`six.py`), or a package whose `__init__.py` is not empty
// (RECORD's size field). Namespace packages (`nvidia/`, shared by every
// nvidia-* wheel with an empty or absent __init__.py) and data are not owned.
std::optional<std::string> import_package_of(const std::string& relative, std::string_view line) {
  const fs::path path(relative);
  const auto depth = std::distance(path.begin(), path.end());
  if (depth == 1 && relative.ends_with(".py") && relative != "__init__.py") {
    return relative.substr(0, relative.size() - 3);
  }
  if (depth != 2 || path.filename() != "__init__.py") return std::nullopt;
  const std::string_view size = line.substr(line.rfind(',') + 1);
  if (size.empty() || size == "0") return std::nullopt;
  return path.begin()->string();
}

// Reads one dist-info: metadata, provenance, RECORD libraries, editable trees.
Installed read_dist_info(const fs::path& site, const fs::path& dist_info, std::set<fs::path>& seen) {
  Installed installed;
  PackageKernels& package = installed.package;
  read_metadata(dist_info / "METADATA", package);
  if (package.distribution.empty()) package.distribution = dist_info.stem().string();
  package.provenance.installer = trimmed(read_small(dist_info / "INSTALLER"));
  std::vector<fs::path> import_roots;
  fs::path project;
  if (const std::string direct = read_small(dist_info / "direct_url.json"); !direct.empty()) {
    const json j = json::parse(direct, nullptr, false);
    if (j.is_object()) {
      package.provenance.url = j.value("url", std::string{});
      const json dir_info = j.value("dir_info", json::object());
      if (dir_info.is_object() && dir_info.value("editable", false)) project = file_url_path(package.provenance.url);
    }
  }
  std::set<std::string> owns;
  const std::string record = read_small(dist_info / "RECORD", k_record_max_bytes);
  for (std::string_view line : lines_of(record)) {
    const std::string relative = record_path(line);
    if (relative.empty()) continue;
    const fs::path file = (site / relative).lexically_normal();
    const std::string name = file.filename().string();
    if (!project.empty() && name.starts_with("__editable__")) {
      if (name.ends_with("_finder.py")) std::ranges::move(finder_mapping(file), std::back_inserter(import_roots));
      if (name.ends_with(".pth")) {
        const std::string pth_text = read_small(file);
        for (std::string_view pth : lines_of(pth_text)) {
          std::error_code ec;
          if (!pth.starts_with("import") && !pth.empty() && fs::is_directory(std::string(pth), ec))
            import_roots.emplace_back(pth);
        }
      }
      continue;
    }
    if (auto owned = import_package_of(relative, line)) owns.insert(*owned);
    if (!is_shared_library_name(relative) || !seen.insert(file).second) continue;
    std::error_code ec;
    if (fs::exists(file, ec)) {
      installed.libraries.push_back({file, {}});
    } else {
      installed.libraries.push_back(
          {file, "listed in " + (dist_info / "RECORD").string() + " but missing (broken or partial install)"});
    }
  }
  package.provenance.owns.assign(owns.begin(), owns.end());
  if (!project.empty()) {
    if (import_roots.empty()) import_roots.push_back(project);
    add_editable_tree(import_roots, project, installed);
  }
  return installed;
}

// Reads one NAME.egg-link (`setup.py develop`, `pip install -e` of a project
// without PEP 660): its first line is the folder put on sys.path.
Installed read_egg_link(const fs::path& egg_link) {
  Installed installed;
  PackageKernels& package = installed.package;
  const std::string text = read_small(egg_link);
  const auto lines = lines_of(text);
  const fs::path root = lines.empty() ? fs::path{} : fs::path(trimmed(lines.front()));
  package.distribution = egg_link.stem().string();
  package.provenance.installer = "setup.py develop";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.path().extension() == ".egg-info") read_metadata(entry.path() / "PKG-INFO", package);
  }
  if (!root.empty()) add_editable_tree({root}, root, installed);
  return installed;
}

// Returns the conda prefix of `site` (PREFIX/lib/pythonX.Y/site-packages or
// PREFIX/Lib/site-packages) when PREFIX/conda-meta exists.
std::optional<fs::path> conda_prefix(const fs::path& site) {
  std::error_code ec;
  for (fs::path prefix : {site.parent_path().parent_path().parent_path(), site.parent_path().parent_path()}) {
    if (fs::is_directory(prefix / "conda-meta", ec)) return prefix;
  }
  return std::nullopt;
}

// Reads PREFIX/conda-meta/*.json: each record's name, version, build,
// channel and `files` (paths relative to PREFIX). Merges into a dist-info of
// the same name (conda's `pytorch` is `torch`), else adds a distribution.
void add_conda(const fs::path& prefix, std::vector<Installed>& out, std::set<fs::path>& seen) {
  std::vector<fs::path> records;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prefix / "conda-meta", ec)) {
    if (entry.path().extension() == ".json") records.push_back(entry.path());
  }
  std::ranges::sort(records);
  for (const fs::path& record : records) {
    const json j = json::parse(read_small(record, k_conda_meta_max_bytes), nullptr, false);
    if (!j.is_object() || !j.contains("name")) continue;
    // conda's package `pytorch` installs pip's distribution `torch` (the
    // torch import package, and torch-X.dist-info where the build ran pip):
    // it is torch, under torch's name, for every check that looks for torch.
    std::string name = j.value("name", std::string{});
    if (name == "pytorch") name = "torch";
    auto it = std::ranges::find_if(out, [&](const Installed& i) {
      return normalise_distribution(i.package.distribution) == normalise_distribution(name);
    });
    Installed* installed = it != out.end() ? &*it : nullptr;
    Installed fresh;
    if (!installed) {
      installed = &fresh;
      fresh.package.distribution = name;
      fresh.package.version = j.value("version", std::string{});
    }
    Provenance& o = installed->package.provenance;
    o.installer = "conda";
    o.conda_build = j.value("build", std::string{});
    o.conda_channel = j.value("channel", std::string{});
    for (const json& file : j.value("files", json::array())) {
      if (!file.is_string() || !is_shared_library_name(file.get<std::string>())) continue;
      const fs::path path = (prefix / file.get<std::string>()).lexically_normal();
      std::error_code exists_ec;
      if (seen.insert(path).second && fs::is_regular_file(path, exists_ec)) installed->libraries.push_back({path, {}});
    }
    if (installed == &fresh) out.push_back(std::move(fresh));
  }
}

}  // namespace

bool is_shared_library_name(const std::string& path) {
  const auto name = fs::path(path).filename().string();
  // Windows extension modules (.pyd) and DLLs are PE files the reader also reads.
  return name.ends_with(".so") || name.find(".so.") != std::string::npos || name.ends_with(".pyd") ||
         name.ends_with(".dll");
}

std::vector<Installed> list_installed(const fs::path& site) {
  std::vector<fs::path> dist_infos;
  std::vector<fs::path> egg_links;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(site, ec)) {
    std::error_code type_ec;
    if (entry.path().extension() == ".dist-info" && entry.is_directory(type_ec)) dist_infos.push_back(entry.path());
    if (entry.path().extension() == ".egg-link") egg_links.push_back(entry.path());
  }
  std::ranges::sort(dist_infos);
  std::ranges::sort(egg_links);
  std::vector<Installed> out;
  std::set<fs::path> seen;
  for (const fs::path& dist_info : dist_infos) out.push_back(read_dist_info(site, dist_info, seen));
  for (const fs::path& egg_link : egg_links) {
    Installed installed = read_egg_link(egg_link);
    std::erase_if(installed.libraries, [&](const InstalledLibrary& l) { return !seen.insert(l.path).second; });
    out.push_back(std::move(installed));
  }
  if (auto prefix = conda_prefix(site)) add_conda(*prefix, out, seen);
  for (Installed& installed : out) installed.package.provenance.cuda_major = cuda_major_of(installed.package);
  std::ranges::sort(out, {}, [](const Installed& i) { return i.package.distribution; });
  return out;
}

}  // namespace torchfix::binary
