// util/own_executable.hpp on Windows: GetModuleFileNameW of the process's
// own module, kept wide so that a non-ASCII install folder stays exact.
#include <windows.h>

#include <string>

#include "util/own_executable.hpp"

namespace torchfix::util {

std::optional<std::filesystem::path> own_executable() {
  // MAX_PATH first; a long-path install (\\?\ prefixes) can need up to 32767.
  std::wstring buffer(MAX_PATH, L'\0');
  while (true) {
    const DWORD n = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
    if (n == 0) return std::nullopt;
    if (n < buffer.size()) return std::filesystem::path(buffer.substr(0, n));
    if (buffer.size() >= 32768) return std::nullopt;
    buffer.resize(buffer.size() * 2);
  }
}

}  // namespace torchfix::util
