#pragma once
// Marks a test that needs Linux, with the reason: the first statement of its
// body. On Windows (torchfix.exe's suite under Wine, .ci/package step 5) the
// test is skipped with "Linux-only: <reason>"; on Linux it runs unchanged.
// Where such a test's code cannot compile for Windows (fork, kill, mkfifo,
// ...), it also sits in an `#ifndef _WIN32` block. `grep -rn
// TORCHFIX_LINUX_ONLY tests/` lists every Linux-only test with its reason.

#include <gtest/gtest.h>

#ifdef _WIN32
#define TORCHFIX_LINUX_ONLY(reason) GTEST_SKIP() << "Linux-only: " reason
#else
#define TORCHFIX_LINUX_ONLY(reason) static_assert(sizeof(reason) > 1, "say why the test needs Linux")
#endif
