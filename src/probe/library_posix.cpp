// open_library and library_symbol (probe/gpu_libraries.hpp) on POSIX:
// dlopen and dlsym. library_win.cpp is the Windows side.
#include <dlfcn.h>

#include "probe/gpu_libraries.hpp"

namespace torchfix {

void* open_library(const std::string& library, std::string& error) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    error = "cannot load " + library + ": " + (why ? why : "unknown dlopen error");
  }
  return handle;
}

void* library_symbol(void* handle, const char* name) {
  return ::dlsym(handle, name);
}

}  // namespace torchfix
