# Precompiled headers for the static zig build (TORCHFIX_STATIC with
# cmake/zig-*.cmake), which CI compiles twice (x86_64 with the test suite, aarch64) on 2 cores. Parsing
# nlohmann/json, CLI11 and GoogleTest takes 2-3 s of CPU per file with zig's
# clang, about half of a typical file's compile time; one precompiled header
# for src/ and one for tests/ parse them once. Every target reuses its
# group's header (REUSE_FROM), so each is built once; a file then sees these
# headers even where it does not include them, which the shared build (CI's
# ASan build) still checks.
#
# Included at the end of the top-level CMakeLists, after every target exists.

set(torchfix_pch_common <algorithm> <chrono> <filesystem> <map> <optional> <set> <sstream> <string> <string_view>
                        <vector> <nlohmann/json.hpp>)

# Adds static library `name` that only builds the precompiled header of
# `headers` with the usage requirements of `libs`, which every target that
# reuses it also has: a file may define more macros than its header was
# built with (TORCHFIX_VERSION, TOML_HEADER_ONLY, ...), never fewer.
function(torchfix_pch_host name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS" ${ARGN})
  set(source "${CMAKE_BINARY_DIR}/${name}.cpp")
  file(CONFIGURE OUTPUT "${source}" CONTENT "// Builds the precompiled header of ${name} (cmake/static-pch.cmake).\n")
  add_library(${name} STATIC "${source}")
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
endfunction()

# Lists in `out` the C++ targets defined in `dir` and its subdirectories.
function(torchfix_cxx_targets dir out)
  set(found "")
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.cpp$")
    if(sources)
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    torchfix_cxx_targets("${subdir}" more)
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# zig adds -emit-pch itself for a header input; CMake's default for Clang
# passes it again, which clang rejects. (The zig wrappers drop -c for it.)
set(CMAKE_CXX_COMPILE_OPTIONS_CREATE_PCH -Xclang -include -Xclang <PCH_HEADER> -x c++-header)

torchfix_pch_host(torchfix_pch_src HEADERS ${torchfix_pch_common} <CLI/CLI.hpp> <fmt/format.h>
                  LIBS nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt)
torchfix_cxx_targets("${PROJECT_SOURCE_DIR}/src" src_targets)
foreach(target IN LISTS src_targets)
  target_precompile_headers(${target} REUSE_FROM torchfix_pch_src)
endforeach()

if(TORCHFIX_TESTS)
  torchfix_pch_host(torchfix_pch_tests HEADERS ${torchfix_pch_common} <fstream> <gtest/gtest.h>
                    LIBS nlohmann_json::nlohmann_json GTest::gtest)
  torchfix_cxx_targets("${PROJECT_SOURCE_DIR}/tests" test_targets)
  foreach(target IN LISTS test_targets)
    target_precompile_headers(${target} REUSE_FROM torchfix_pch_tests)
  endforeach()
endif()
