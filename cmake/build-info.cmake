# What `torchfix --version` and `torchfix version --json` say about this
# build, decided at configure time (src/cli/build_info.hpp.in): the commit,
# the build kind, the target and the date of the knowledge tables.
find_package(Git QUIET)
set(TORCHFIX_COMMIT "unknown")
set(TORCHFIX_TABLES_DATE "unknown")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND commit)
    set(TORCHFIX_COMMIT "${commit}")
  endif()
  # The tables' date is that of the last commit that changed recipes/.
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} log -1 --format=%cs -- recipes
                  OUTPUT_VARIABLE date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND date)
    set(TORCHFIX_TABLES_DATE "${date}")
  endif()
endif()
if(WIN32 AND TORCHFIX_STATIC)
  set(TORCHFIX_BUILD_KIND "static")  # MinGW's C runtime is linked in; only Windows' own DLLs are loaded
elseif(SKBUILD)
  set(TORCHFIX_BUILD_KIND "wheel (static except glibc)")
elseif(TORCHFIX_STATIC)
  set(TORCHFIX_BUILD_KIND "static except glibc")
else()
  set(TORCHFIX_BUILD_KIND "source build (${CMAKE_BUILD_TYPE}")
  if(TORCHFIX_SANITIZE)
    string(APPEND TORCHFIX_BUILD_KIND ", ASan+UBSan")
  endif()
  string(APPEND TORCHFIX_BUILD_KIND ")")
endif()
if(TORCHFIX_ZIG_TARGET)
  set(TORCHFIX_TARGET "${TORCHFIX_ZIG_TARGET}")
else()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -dumpmachine OUTPUT_VARIABLE target
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND target)
    set(TORCHFIX_TARGET "${target}")
  else()
    set(TORCHFIX_TARGET "${CMAKE_SYSTEM_PROCESSOR}-linux")
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/src/cli/build_info.hpp.in ${PROJECT_BINARY_DIR}/generated/cli/build_info.hpp @ONLY)
