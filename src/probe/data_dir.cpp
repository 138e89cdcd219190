#include "probe/data_dir.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "probe/embedded_data.hpp"
#include "util/own_executable.hpp"

namespace torchfix {

namespace fs = std::filesystem;

std::string DataSource::where() const {
  return embedded() ? std::string("embedded in the binary") : dir.string();
}

std::string DataSource::label(std::string_view relative) const {
  return embedded() ? "embedded:" + std::string(relative) : (dir / relative).string();
}

Expected<DataSource> find_data(const Environment& env) {
  if (auto it = env.find("TORCHFIX_DATA_DIR"); it != env.end() && !it->second.empty()) {
    // An override that is wrong is an error, never a quiet fall back to the
    // embedded copy: the user asked for these tables.
    std::error_code ec;
    if (fs::is_directory(fs::path(it->second) / "recipes", ec)) return DataSource{it->second};
    return fail("TORCHFIX_DATA_DIR=" + it->second +
                " holds no recipes/ folder; point it at the folder that holds recipes/ and templates/, or unset it to "
                "use the tables embedded in the binary");
  }
  // <prefix>/bin/torchfix (Linux) and <prefix>\Scripts\torchfix.exe (a
  // Windows venv, where the win_amd64 wheel's data lands in <prefix>\share).
  if (const auto exe = util::own_executable()) {
    std::error_code ec;
    for (const fs::path& dir : {exe->parent_path(), exe->parent_path().parent_path() / "share" / "torchfix"}) {
      if (fs::is_directory(dir / "recipes", ec)) return DataSource{dir};
    }
  }
  return DataSource{};
}

util::ReadLimits data_file_limits(std::string_view what) {
  return util::ReadLimits{1u << 20, util::Pipes::refuse, what};
}

namespace {

const EmbeddedFile* find_embedded(std::string_view relative) {
  const auto files = embedded_files();
  const auto it = std::ranges::lower_bound(files, relative, {}, &EmbeddedFile::name);
  return it != files.end() && it->name == relative ? &*it : nullptr;
}

}  // namespace

Expected<std::string> read_data_file(const DataSource& source, std::string_view relative,
                                     const util::ReadLimits& limits) {
  if (!source.embedded()) {
    auto text = util::read_file_bytes(source.dir / relative, limits);
    if (!text) {
      return fail("cannot read " + std::string(limits.what) + " " + source.label(relative) + ": " +
                  text.error().message +
                  "; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/ and templates/");
    }
    return text;
  }
  const EmbeddedFile* file = find_embedded(relative);
  if (file == nullptr) {
    return fail("the binary embeds no " + std::string(relative) +
                "; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/ and templates/");
  }
  return std::string(file->text);
}

Expected<std::vector<std::string>> list_data_files(const DataSource& source, std::string_view folder,
                                                   std::string_view suffix, std::string_view what) {
  std::vector<std::string> names;
  if (source.embedded()) {
    const std::string prefix = std::string(folder) + "/";
    for (const EmbeddedFile& f : embedded_files()) {
      const std::string_view rest = f.name.substr(std::min(f.name.size(), prefix.size()));
      if (f.name.starts_with(prefix) && rest.find('/') == std::string_view::npos && rest.ends_with(suffix)) {
        names.emplace_back(f.name);
      }
    }
    return names;
  }
  const fs::path dir = source.dir / folder;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return fail("no folder " + dir.string() + ": reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with " +
                std::string(folder) + "/");
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(suffix)) continue;
    // A folder named x.toml is no file of the kind: say so rather than
    // report one without fields.
    if (fs::is_directory(entry.path(), ec)) {
      return fail(entry.path().string() + ": a folder, not a " + std::string(what) + " file; rename it (" +
                  std::string(what) + "s are *" + std::string(suffix) + " files) or remove it");
    }
    names.push_back(std::string(folder) + "/" + name);
  }
  std::ranges::sort(names);
  return names;
}

std::string folder_tables_date(const DataSource& source) {
  if (source.embedded()) return {};
  std::error_code ec;
  // file_clock's epoch is not 1970 (libstdc++: 2174), so "none yet" is min().
  fs::file_time_type newest = fs::file_time_type::min();
  for (const auto& entry : fs::recursive_directory_iterator(source.dir / "recipes", ec)) {
    std::error_code time_ec;
    const auto t = entry.last_write_time(time_ec);
    if (!time_ec && entry.is_regular_file(time_ec)) newest = std::max(newest, t);
  }
  if (newest == fs::file_time_type::min()) return {};
  // The civil date in UTC by <chrono>'s calendar (no gmtime_r on Windows).
  const auto day = std::chrono::floor<std::chrono::days>(std::chrono::file_clock::to_sys(newest));
  const std::chrono::year_month_day date(day);
  char text[16] = {};
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()));
  return text;
}

}  // namespace torchfix
