# Toolchain: zig for x86_64 Windows (x86_64-windows-gnu, MinGW-w64), giving a
# static torchfix.exe (see zig-toolchain.cmake and docs/windows.md).
set(TORCHFIX_ZIG_ARCH x86_64)
set(TORCHFIX_ZIG_OS windows)
include(${CMAKE_CURRENT_LIST_DIR}/zig-toolchain.cmake)
