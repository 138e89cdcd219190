# TORCHFIX_STATIC: link every library but glibc into the torchfix binary, so
# that one file runs on any Linux with the toolchain's glibc floor (2.28 with
# cmake/zig-*.cmake) without shared libraries beside it.
#
# The C dependencies come from Debian's source packages, built once by
# packaging/build-deps into TORCHFIX_DEPS_PREFIX (default
# .cache/deps/<toolchain>, ignored by git) with this build's compilers; the
# header-only C++ libraries come from the host's -dev packages through the
# same prefix. Defines the imported targets the non-static build gets from
# find_package / pkg-config, under the same names, so src/ does not know
# which kind of build it is in.

if(TORCHFIX_ZIG_TARGET)
  set(key "zig-${TORCHFIX_ZIG_TARGET}")
else()
  set(key "${CMAKE_CXX_COMPILER_ID}-${CMAKE_SYSTEM_PROCESSOR}")
endif()
set(TORCHFIX_DEPS_PREFIX "${PROJECT_SOURCE_DIR}/.cache/deps/${key}"
    CACHE PATH "Folder with the static C dependencies (built there by packaging/build-deps when missing)")

set(deps_args "${TORCHFIX_DEPS_PREFIX}")
if(TORCHFIX_TESTS)
  list(APPEND deps_args --with-gtest)
endif()
set(deps_env CC=${CMAKE_C_COMPILER} CXX=${CMAKE_CXX_COMPILER} AR=${CMAKE_AR} RANLIB=${CMAKE_RANLIB})
if(WIN32)
  list(APPEND deps_env HOST_TRIPLE=${CMAKE_SYSTEM_PROCESSOR}-w64-mingw32)
elseif(CMAKE_CROSSCOMPILING AND NOT CMAKE_SYSTEM_PROCESSOR STREQUAL CMAKE_HOST_SYSTEM_PROCESSOR)
  list(APPEND deps_env HOST_TRIPLE=${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
endif()
message(STATUS "torchfix: static dependencies in ${TORCHFIX_DEPS_PREFIX} (packaging/build-deps builds them once)")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${deps_env} ${PROJECT_SOURCE_DIR}/packaging/build-deps ${deps_args}
                RESULT_VARIABLE deps_result)
if(NOT deps_result EQUAL 0)
  message(FATAL_ERROR "packaging/build-deps failed (exit ${deps_result}); see its output above")
endif()

list(APPEND CMAKE_PREFIX_PATH "${TORCHFIX_DEPS_PREFIX}")
list(APPEND CMAKE_FIND_ROOT_PATH "${TORCHFIX_DEPS_PREFIX}")
set(deps_include "${TORCHFIX_DEPS_PREFIX}/include")
set(deps_lib "${TORCHFIX_DEPS_PREFIX}/lib")
find_package(Threads REQUIRED)

# Adds INTERFACE target `name` with the prefix's headers and `definitions`.
function(torchfix_header_only name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${deps_include}"
                                           INTERFACE_COMPILE_DEFINITIONS "${ARGN}")
endfunction()
torchfix_header_only(CLI11::CLI11)
torchfix_header_only(nlohmann_json::nlohmann_json)

# Adds STATIC IMPORTED target `name` for lib`file`.a, linking `deps` after it.
function(torchfix_static_lib name file)
  if(NOT EXISTS "${deps_lib}/lib${file}.a")
    message(FATAL_ERROR "${deps_lib}/lib${file}.a missing: delete ${TORCHFIX_DEPS_PREFIX} and configure again")
  endif()
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES IMPORTED_LOCATION "${deps_lib}/lib${file}.a"
                                           INTERFACE_INCLUDE_DIRECTORIES "${deps_include}"
                                           INTERFACE_LINK_LIBRARIES "${ARGN}")
endfunction()
# fmt and toml++ are compiled once by build-deps, not in every file that
# includes them (their header-only modes cost seconds per file at -O2).
torchfix_static_lib(fmt::fmt fmt)
torchfix_static_lib(tomlplusplus::tomlplusplus tomlplusplus)
set_target_properties(tomlplusplus::tomlplusplus PROPERTIES INTERFACE_COMPILE_DEFINITIONS TOML_HEADER_ONLY=0)
torchfix_static_lib(torchfix_deps::zlib z)
torchfix_static_lib(LibArchive::LibArchive archive torchfix_deps::zlib)
# archive.h declares its functions dllimport on Windows unless told the
# library is static.
if(WIN32)
  set_target_properties(LibArchive::LibArchive PROPERTIES INTERFACE_COMPILE_DEFINITIONS LIBARCHIVE_STATIC)
endif()
# The Windows build has neither (packaging/build-deps): TORCHFIX_ELF and
# TORCHFIX_CLONE are off there.
if(TORCHFIX_ELF)
  torchfix_static_lib(PkgConfig::LIBELF elf torchfix_deps::zlib)
endif()
if(TORCHFIX_CLONE)
  torchfix_static_lib(torchfix_deps::http_parser http_parser)
  # libgit2 loads libssl at run time (USE_HTTPS=OpenSSL-Dynamic): dlopen.
  torchfix_static_lib(PkgConfig::LIBGIT2 git2 torchfix_deps::http_parser torchfix_deps::zlib Threads::Threads
                      ${CMAKE_DL_LIBS})
endif()

# C++ runtime: zig always links libc++ statically. GCC links libstdc++
# statically and keeps libgcc_s shared (its static unwinder needs
# _dl_find_object, glibc 2.35); GCC 12's libstdc++.a also needs arc4random
# (glibc 2.36), so such a binary's floor is the build machine's glibc: use the
# zig toolchain for a portable binary.
if(NOT TORCHFIX_ZIG_TARGET AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_link_options(-static-libstdc++)
endif()
