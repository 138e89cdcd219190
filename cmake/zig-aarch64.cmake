# Toolchain: zig for aarch64 Linux with glibc 2.28 (see zig-toolchain.cmake).
set(TORCHFIX_ZIG_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/zig-toolchain.cmake)
