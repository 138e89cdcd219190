#pragma once
// Finds torchfix's run-time data (recipes/ and templates/) and reads its
// files: a data folder on disk ($TORCHFIX_DATA_DIR, beside the binary, or
// the installation's share/torchfix), else the copy compiled into the binary.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "probe/process.hpp"
#include "util/file.hpp"

namespace torchfix {

/// Holds where the data is read from: a folder, or (empty `dir`) the files
/// embedded in the binary at build time.
struct DataSource {
  std::filesystem::path dir;  // holds recipes/ and templates/; empty: embedded

  /// Returns true when the files are the binary's own copy.
  bool embedded() const { return dir.empty(); }
  /// Returns "embedded in the binary" or the folder's path, for messages.
  std::string where() const;
  /// Returns the name of the file `relative` ("recipes/gpus.toml") as
  /// messages give it: its path on disk, or "embedded:recipes/gpus.toml".
  std::string label(std::string_view relative) const;
};

/// Returns where the data is: $TORCHFIX_DATA_DIR when set (an error naming
/// it when it holds no recipes/), else the executable's folder (a build
/// tree), else <prefix>/share/torchfix next to <prefix>/bin, else the
/// embedded copy. Errors only for a wrong $TORCHFIX_DATA_DIR.
Expected<DataSource> find_data(const Environment& env);

/// Returns the text of the file `relative` ("templates/env.bash") of
/// `source`. On disk it is read by util's bounded reader under `limits`
/// (regular files only, size cap); errors name the path and say what to do.
Expected<std::string> read_data_file(const DataSource& source, std::string_view relative,
                                     const util::ReadLimits& limits);

/// Returns the relative names of the files directly in `folder`
/// ("recipes/build") whose names end with `suffix`, sorted. Errors: the
/// folder is missing, or (on disk) an entry with that suffix is a folder
/// (named as "not a <what> file").
Expected<std::vector<std::string>> list_data_files(const DataSource& source, std::string_view folder,
                                                   std::string_view suffix, std::string_view what);

/// Returns the bounds of reading a data file that is no table (a template,
/// a script, a completion script): 1 MiB, regular files only, named `what`.
util::ReadLimits data_file_limits(std::string_view what);

/// Returns the date (YYYY-MM-DD, UTC) of the newest file in the folder's
/// recipes/ (its modification time); empty when embedded (the build's date,
/// cli's k_build_tables_date, is that of the embedded tables) or unreadable.
std::string folder_tables_date(const DataSource& source);

}  // namespace torchfix
