#include "shellenv/rc_edit.hpp"

#include <vector>

#include "shellenv/utf8.hpp"

namespace torchfix::shellenv {
namespace {

// One physical line of the file: [start, start + length) is its content
// without the terminator, which is `terminator` bytes long (0 on a last line
// without a final newline). A "\r" before "\n" belongs to the terminator.
struct Line {
  std::size_t start = 0;
  std::size_t length = 0;
  std::size_t terminator = 0;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.push_back({pos, text.size() - pos, 0});
      break;
    }
    const bool crlf = nl > pos && text[nl - 1] == '\r';
    lines.push_back({pos, nl - pos - (crlf ? 1 : 0), crlf ? 2u : 1u});
    pos = nl + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

enum class Marker { none, begin, end };

Marker marker_of(std::string_view content) {
  const std::string_view t = trim(content);
  if (t == k_begin_marker) return Marker::begin;
  if (t == k_end_marker) return Marker::end;
  return Marker::none;
}

// The file's own line ending: that of its first terminated line, so a CRLF
// file gets a CRLF block. A file without any line break gets "\n".
std::string_view line_ending(std::string_view rc) {
  const std::size_t nl = rc.find('\n');
  return nl != std::string_view::npos && nl > 0 && rc[nl - 1] == '\r' ? "\r\n" : "\n";
}

// Renders the block from its begin marker to its end marker, without the end
// marker's terminator (the caller decides whether there is one).
std::string render_block(std::string_view body, std::string_view eol) {
  std::string out(k_begin_marker);
  out += eol;
  for (const Line& line : split_lines(body)) {
    out += body.substr(line.start, line.length);
    out += eol;
  }
  out += k_end_marker;
  return out;
}

}  // namespace

Expected<void> check_text(std::string_view bytes) {
  const auto bad = [](std::size_t offset, std::string_view what) {
    return fail("the file is not text (" + std::string(what) + " at byte offset " + std::to_string(offset) +
                "); torchfix edits only UTF-8 text files and left it unchanged");
  };
  for (std::size_t i = 0; i < bytes.size();) {
    if (bytes[i] == '\0') return bad(i, "a NUL byte");
    const std::size_t len = utf8_length_at(bytes, i);
    if (len == 0) return bad(i, "an invalid UTF-8 sequence");
    i += len;
  }
  return {};
}

Expected<std::optional<BlockSpan>> find_block(std::string_view rc) {
  std::optional<std::size_t> begin_line;
  std::optional<BlockSpan> found;
  std::size_t found_begin_line = 0;
  const std::vector<Line> lines = split_lines(rc);
  const auto unbalanced = [](const std::string& what) {
    return fail("the torchfix markers in this file are unbalanced: " + what + ". Fix the lines '" +
                std::string(k_begin_marker) + "' / '" + std::string(k_end_marker) +
                "' by hand (one begin, then one end); the file was left unchanged");
  };
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const Line& line = lines[n];
    const Marker m = marker_of(rc.substr(line.start, line.length));
    const std::string where = "line " + std::to_string(n + 1);
    if (m == Marker::begin) {
      if (begin_line) {
        return unbalanced("a second begin marker on " + where + " before the end of the block opened on line " +
                          std::to_string(*begin_line + 1));
      }
      if (found) {
        return unbalanced("a second block starts on " + where + " (the first one is on line " +
                          std::to_string(found_begin_line + 1) + ")");
      }
      begin_line = n;
    } else if (m == Marker::end) {
      if (!begin_line) return unbalanced("an end marker on " + where + " without a begin marker before it");
      found = BlockSpan{lines[*begin_line].start, line.start + line.length, line.terminator};
      found_begin_line = *begin_line;
      begin_line.reset();
    }
  }
  if (begin_line) {
    return unbalanced("the begin marker on line " + std::to_string(*begin_line + 1) + " has no end marker");
  }
  return found;
}

Expected<std::optional<std::string>> block_body(std::string_view rc) {
  auto span = find_block(rc);
  if (!span) return std::unexpected(span.error());
  if (!*span) return std::optional<std::string>();
  const std::string_view block = rc.substr((*span)->begin, (*span)->end - (*span)->begin);
  std::vector<Line> lines = split_lines(block);
  std::string body;
  for (std::size_t n = 1; n + 1 < lines.size(); ++n) {
    body += block.substr(lines[n].start, lines[n].length);
    body += '\n';
  }
  return std::optional<std::string>(std::move(body));
}

Expected<std::string> install_block(std::string_view rc, std::string_view body) {
  if (auto ok = check_text(rc); !ok) return std::unexpected(ok.error());
  if (auto ok = check_text(body); !ok) {
    return fail("the snippet to install is not text: " + ok.error().message);
  }
  for (const Line& line : split_lines(body)) {
    if (marker_of(body.substr(line.start, line.length)) != Marker::none) {
      return fail("the snippet to install contains a torchfix marker line ('" +
                  std::string(trim(body.substr(line.start, line.length))) +
                  "'), which would break the block; this is a bug in the snippet");
    }
  }
  auto span = find_block(rc);
  if (!span) return std::unexpected(span.error());
  const std::string_view eol = line_ending(rc);
  std::string out;
  if (*span) {
    // Replace in place; the end marker's old terminator (or its absence) stays.
    out.append(rc.substr(0, (*span)->begin));
    out += render_block(body, eol);
    out.append(rc.substr((*span)->end));
    return out;
  }
  out.append(rc);
  if (rc.empty() || rc.back() == '\n') {
    out += render_block(body, eol);
    out += eol;
  } else {
    // No final newline: break the last line, and leave the block without a
    // final newline so the file keeps its shape (remove_block undoes both).
    // The break can make the file's first line end in "\r\n" (a file "x\r"),
    // so the block takes the line ending of the file as it now is: that keeps
    // a second install byte-identical.
    out += eol;
    out += render_block(body, line_ending(out));
  }
  return out;
}

Expected<std::string> remove_block(std::string_view rc) {
  if (auto ok = check_text(rc); !ok) return std::unexpected(ok.error());
  auto span = find_block(rc);
  if (!span) return std::unexpected(span.error());
  if (!*span) return std::string(rc);
  std::size_t begin = (*span)->begin;
  const std::size_t end = (*span)->end + (*span)->terminator;
  if ((*span)->terminator == 0 && begin > 0) {
    // The block ends the file without a final newline: it was appended after
    // a line break added to a file that had none, so take that break too.
    // install_block used the file's own line ending there, so "\r\n" only
    // when the text before it is a CRLF file (a lone '\r' is content).
    --begin;
    if (begin > 0 && rc[begin - 1] == '\r' && line_ending(rc.substr(0, begin - 1)) == "\r\n") --begin;
  }
  std::string out(rc.substr(0, begin));
  out.append(rc.substr(end));
  return out;
}

}  // namespace torchfix::shellenv
