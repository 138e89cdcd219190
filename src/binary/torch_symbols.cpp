#include "binary/torch_symbols.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <system_error>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif

#include "binary/elf.hpp"
#include "binary/source.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// torch's shared libraries: libc10.so, libc10_cuda.so, libtorch.so,
// libtorch_cpu.so, libtorch_cuda.so, libtorch_python.so (and their kin).
bool is_torch_library_file(const fs::path& file) {
  const std::string name = file.filename().string();
  return (name.starts_with("libc10") || name.starts_with("libtorch")) && name.ends_with(".so");
}

// Returns `name` demangled, or as it is where it cannot be.
std::string readable(const std::string& name) {
#if __has_include(<cxxabi.h>)
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status == 0 && text) return text.get();
#endif
  return name;
}

}  // namespace

bool is_torch_symbol(std::string_view name) {
  if (name.starts_with("THP")) return true;
  if (!name.starts_with("_Z")) return false;
  // The outermost name of a mangled symbol: _ZN (nested) or _ZNK (const
  // member), or a vtable, typeinfo or its name (_ZTV, _ZTI, _ZTS) of one.
  std::string_view rest = name.substr(2);
  for (std::string_view prefix : {"TV", "TI", "TS"}) {
    if (rest.starts_with(prefix)) rest.remove_prefix(2);
  }
  if (!rest.starts_with('N')) {
    // A function of the global namespace: its name's length, then the name (_Z16THPVariable_Wrap...).
    const std::size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    return digits > 0 && rest.substr(digits).starts_with("THP");
  }
  rest.remove_prefix(1);
  if (rest.starts_with('K')) rest.remove_prefix(1);
  for (std::string_view space : {"3c10", "2at", "5torch", "6caffe2"}) {
    if (rest.starts_with(space)) return true;
  }
  return false;
}

Expected<TorchExports> TorchExports::read(const fs::path& lib_dir) {
  TorchExports out;
  std::error_code ec;
  int libraries = 0;
  for (const auto& entry : fs::directory_iterator(lib_dir, ec)) {
    if (!is_torch_library_file(entry.path())) continue;
    // A dangling link (Debian's python3-torch links libraries it may not ship) is not one of them.
    auto source = ByteSource::open(entry.path());
    if (!source) continue;
    auto symbols = read_dynamic_symbols(*source);
    if (!symbols) return fail(entry.path().string() + ": " + symbols.error().message);
    for (const std::string& name : symbols->exported) out.m_hashes.insert(fnv1a(name));
    ++libraries;
  }
  if (libraries == 0) return fail("no libc10*.so or libtorch*.so in " + lib_dir.string());
  return out;
}

bool TorchExports::exports(std::string_view name) const {
  return m_hashes.contains(fnv1a(name));
}

std::optional<TorchSymbols> check_torch_symbols(const fs::path& library, const TorchExports& exports,
                                                const std::string& torch_version) {
  auto source = ByteSource::open(library);
  if (!source) return std::nullopt;
  auto symbols = read_dynamic_symbols(*source);
  if (!symbols) return std::nullopt;
  TorchSymbols out;
  out.torch = torch_version;
  for (const std::string& name : symbols->undefined) {
    if (!is_torch_symbol(name)) continue;
    ++out.needed;
    if (exports.exports(name)) continue;
    ++out.missing;
    if (out.examples.size() < 3) out.examples.push_back(readable(name));
  }
  if (out.needed == 0) return std::nullopt;
  return out;
}

}  // namespace torchfix::binary
