#pragma once
// Pure edits of a shell rc file's bytes: find, insert, replace and remove the
// torchfix block between the marker lines. No file I/O here (see rc_file.hpp),
// so every edit is a unit and property test.
//
// Guarantees (docs/env.md, "rc editing"):
// - bytes outside the block are never changed;
// - the file's line ending (LF or CRLF, taken from its first line) is used for
//   the block's lines;
// - a file without a final newline keeps having none: an appended block then
//   ends without one, and removing such a block removes the line break that
//   was added before it, so uninstall(install(f)) == f byte for byte;
// - installing the same block twice changes nothing.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/error.hpp"

namespace torchfix::shellenv {

/// Marks the start of the torchfix block: a whole line, matched after trimming blanks.
inline constexpr std::string_view k_begin_marker = "# >>> torchfix >>>";
/// Marks the end of the torchfix block: a whole line, matched after trimming blanks.
inline constexpr std::string_view k_end_marker = "# <<< torchfix <<<";

/// Locates the block in an rc file, in bytes: [begin, end) runs from the first
/// byte of the begin marker line to the last byte of the end marker line,
/// excluding that line's terminator.
struct BlockSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t terminator = 0;  // length of the end marker line's terminator: 0, 1 ("\n") or 2 ("\r\n")
};

/// Checks that `bytes` is text: no NUL byte and valid UTF-8. Errors give the
/// byte offset of the first bad byte and say the file was left alone.
Expected<void> check_text(std::string_view bytes);

/// Finds the torchfix block in `rc`; nullopt when there is none. Errors (with
/// the line numbers, 1-based) when the markers are unbalanced: an end without
/// a begin, a begin without an end, nested or repeated blocks.
Expected<std::optional<BlockSpan>> find_block(std::string_view rc);

/// Returns the lines between the markers of `rc` (LF line ends, each line
/// terminated), or nullopt when `rc` has no block. Errors as find_block.
Expected<std::optional<std::string>> block_body(std::string_view rc);

/// Returns `rc` with its block replaced by one holding `body` (lines separated
/// by "\n"; a final "\n" is optional), or with that block appended when there
/// is none. Errors: `rc` is not text or has unbalanced markers; `body` is not
/// text or contains a marker line.
Expected<std::string> install_block(std::string_view rc, std::string_view body);

/// Returns `rc` without its block (unchanged when it has none). Errors: `rc`
/// is not text or has unbalanced markers.
Expected<std::string> remove_block(std::string_view rc);

}  // namespace torchfix::shellenv
