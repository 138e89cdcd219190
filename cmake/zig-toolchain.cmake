# Cross toolchain through `zig cc` / `zig c++` for a fixed glibc floor, so that
# one binary runs on every Linux distribution with that glibc or newer
# (manylinux_2_28: RHEL 8, Ubuntu 20.04, Debian 10 and everything after).
# zig links libc++, libc++abi and libunwind statically and glibc dynamically
# against its own stubs of the requested version, so no host library leaks in.
#
# Not used directly: cmake/zig-x86_64.cmake and cmake/zig-aarch64.cmake set
# TORCHFIX_ZIG_ARCH and include this file.
#
# zig is looked up in this order: -DTORCHFIX_ZIG=/path/to/zig, $ZIG, `zig` on
# PATH, then the `ziglang` package of PyPI (`pip install ziglang`) through
# Python_EXECUTABLE (set by scikit-build-core) or python3.

set(TORCHFIX_ZIG_GLIBC "2.28" CACHE STRING "glibc version the zig build links against (the binary's floor)")
set(CMAKE_SYSTEM_PROCESSOR ${TORCHFIX_ZIG_ARCH})
# TORCHFIX_ZIG_OS "windows" (cmake/zig-x86_64-windows.cmake): a PE torchfix.exe
# against MinGW-w64's C runtime, which zig ships; no glibc floor there.
if(TORCHFIX_ZIG_OS STREQUAL "windows")
  set(CMAKE_SYSTEM_NAME Windows)
  set(TORCHFIX_ZIG_TARGET "${TORCHFIX_ZIG_ARCH}-windows-gnu")
else()
  set(CMAKE_SYSTEM_NAME Linux)
  set(TORCHFIX_ZIG_TARGET "${TORCHFIX_ZIG_ARCH}-linux-gnu.${TORCHFIX_ZIG_GLIBC}")
endif()

if(NOT TORCHFIX_ZIG AND DEFINED ENV{ZIG})
  set(TORCHFIX_ZIG "$ENV{ZIG}")
endif()
if(NOT TORCHFIX_ZIG)
  find_program(TORCHFIX_ZIG_ON_PATH zig)
  if(TORCHFIX_ZIG_ON_PATH)
    set(TORCHFIX_ZIG "${TORCHFIX_ZIG_ON_PATH}")
  endif()
endif()
if(NOT TORCHFIX_ZIG)
  set(python "${Python_EXECUTABLE}")
  if(NOT python)
    set(python python3)
  endif()
  execute_process(
    COMMAND "${python}" -c "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
    OUTPUT_VARIABLE TORCHFIX_ZIG OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT TORCHFIX_ZIG OR NOT EXISTS "${TORCHFIX_ZIG}")
  message(FATAL_ERROR "zig not found: install it (`pip install ziglang`) or pass -DTORCHFIX_ZIG=/path/to/zig")
endif()
set(TORCHFIX_ZIG "${TORCHFIX_ZIG}" CACHE FILEPATH "zig compiler used by the zig toolchain")

# CMake wants one executable per tool, so write tiny wrappers once per build
# tree; try_compile projects reuse the parent's through the platform variables.
if(NOT TORCHFIX_ZIG_WRAPPERS)
  set(TORCHFIX_ZIG_WRAPPERS "${CMAKE_BINARY_DIR}/zig-${TORCHFIX_ZIG_TARGET}")
  # A precompiled header (cmake/static-pch.cmake): zig makes one from
  # `-x c++-header` only without -c (with -c it tries to link the PCH as an
  # object), so the compiler wrappers drop -c for a header.
  set(drop_c [=[case " $* " in *" c++-header "*|*" c-header "*) for a do shift; [ "$a" = -c ] || set -- "$@" "$a"; done ;; esac]=])
  foreach(tool cc c++ ar ranlib)
    set(args "${tool}")
    set(prologue "")
    if(tool STREQUAL "cc" OR tool STREQUAL "c++")
      set(args "${tool} -target ${TORCHFIX_ZIG_TARGET}")
      set(prologue "${drop_c}\n")
    endif()
    file(WRITE "${TORCHFIX_ZIG_WRAPPERS}/${tool}.tmp" "#!/bin/sh\n${prologue}exec \"${TORCHFIX_ZIG}\" ${args} \"$@\"\n")
    file(COPY_FILE "${TORCHFIX_ZIG_WRAPPERS}/${tool}.tmp" "${TORCHFIX_ZIG_WRAPPERS}/${tool}" ONLY_IF_DIFFERENT)
    file(REMOVE "${TORCHFIX_ZIG_WRAPPERS}/${tool}.tmp")
    file(CHMOD "${TORCHFIX_ZIG_WRAPPERS}/${tool}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
         GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TORCHFIX_ZIG TORCHFIX_ZIG_ARCH TORCHFIX_ZIG_OS TORCHFIX_ZIG_WRAPPERS
     TORCHFIX_ZIG_GLIBC)

# zig's clang writes DWARF even at -O2 unless told not to: measured 12% of a
# file's compile time and 7 times the object size, for a binary that ships
# without it. Debug builds add -g after this.
set(CMAKE_C_FLAGS_INIT "-g0")
set(CMAKE_CXX_FLAGS_INIT "-g0")

set(CMAKE_C_COMPILER "${TORCHFIX_ZIG_WRAPPERS}/cc")
set(CMAKE_CXX_COMPILER "${TORCHFIX_ZIG_WRAPPERS}/c++")
set(CMAKE_AR "${TORCHFIX_ZIG_WRAPPERS}/ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${TORCHFIX_ZIG_WRAPPERS}/ranlib" CACHE FILEPATH "" FORCE)

# Look for libraries and headers only in the target's dependency prefix
# (CMAKE_PREFIX_PATH / CMAKE_FIND_ROOT_PATH), never in the host's /usr: the
# host's glibc headers are newer than the floor and its C++ libraries use
# libstdc++.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
