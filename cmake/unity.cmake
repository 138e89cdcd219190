# TORCHFIX_UNITY: compile each src/ library as a few large files (CMake's
# UNITY_BUILD) instead of one per source, on by default for the Windows
# build: .ci/package compiles that tree cold on 2 cores, and zig's clang
# spends most of each small file's time on the same headers and templates.
# Off for the libraries of src/core and src/build (being moved, and their
# tests check them file by file) and for the generated embedded_data.cpp
# (bytes only). Paths are absolute: DIRECTORY does not change what a
# relative one is relative to. Included at the end of the top-level CMakeLists.

set(torchfix_unity_targets torchfix_util torchfix_binary torchfix_probe torchfix_shellenv torchfix_fleet
                           torchfix_report torchfix_cli)
foreach(target IN LISTS torchfix_unity_targets)
  if(TARGET ${target})
    # 8 files a batch: two or three batches a library keep both cores busy.
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endforeach()
set_source_files_properties(${PROJECT_BINARY_DIR}/src/probe/embedded_data.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/src/probe
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# Files with a namespace-scope `using namespace`, which would reach every
# file after them in a batch (pe.cpp's k_sections_max met elf_format's).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/binary/elf.cpp ${PROJECT_SOURCE_DIR}/src/binary/elf_libelf.cpp
                            DIRECTORY ${PROJECT_SOURCE_DIR}/src/binary
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/cli/env.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/src/cli
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# Files whose file-local helpers have the name and signature of another
# file's in the same library (found by the first unity build): resources.cpp
# (read_text, trim: installer_probe.cpp, gpu_parsers.cpp), tune_model_report.cpp
# (opt: tune_report.cpp), fleet_report.cpp (plural: doctor_report.cpp).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/probe/resources.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/src/probe
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/report/tune_model_report.cpp
                            ${PROJECT_SOURCE_DIR}/src/report/fleet_report.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/src/report
                            PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
