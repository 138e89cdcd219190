#pragma once
// The local package index of the fix and guard tests: fake torch wheels whose
// libtorch_cuda.so holds real nvcc kernels (sm_80 and sm_90, plus sm_120 in
// the one that fixes an RTX 5090), filed in PEP 503 trees that a real
// http.server on 127.0.0.1 serves. Built once per test binary, at the first
// test that asks for it, and stopped when the binary exits.

#include <gtest/gtest.h>

#ifndef _WIN32  // a fork-started server: used by Linux-only tests alone (linux_only.hpp)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "../build/test_support.hpp"
#include "child.hpp"

namespace torchfix::testing {

inline const std::string k_fix_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/fix/";
inline const std::string k_nvcc = "/usr/local/cuda/bin/nvcc";
inline const std::string k_python = "/usr/bin/python3";

/// Runs `program args` with exactly `env`, stopped after `timeout`; a failed
/// start fails the test and returns an empty result.
inline ProcessResult run(const std::string& program, std::vector<std::string> args, Environment env,
                         std::chrono::seconds timeout = std::chrono::seconds(300)) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{program, std::move(args), std::move(env), {}, timeout});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

/// Holds the index trees and their server. Trees (each under /TREE/whl/VARIANT):
/// good (cu126 old, cu128 with sm_120), bad (its cu128 lacks sm_120), slow (the
/// cu128 download hangs 120 s), guard (cu126, and a cpu torch with
/// needs-cpu-torch that requires it), holes (cu128 only for another Python;
/// cu130, cu132 for the venvs'), fits (cu128 for the venvs' Python).
class FixIndex {
 public:
  /// Returns the index, building it on the first call; nullptr when nvcc or
  /// Python is missing (the caller skips).
  static FixIndex* get() {
    static std::unique_ptr<FixIndex> s_index;
    static bool s_tried = false;
    if (!s_tried && std::filesystem::exists(k_nvcc) && std::filesystem::exists(k_python)) {
      s_index.reset(new FixIndex());
      s_index->build();
    }
    s_tried = true;
    return s_index.get();
  }
  ~FixIndex() {
    if (m_server > 0) {
      ::kill(m_server, SIGKILL);
      ::waitpid(m_server, nullptr, 0);
    }
  }
  /// Returns the URL of `tree`'s index for `variant`: http://127.0.0.1:PORT/TREE/whl/VARIANT.
  std::string url(const std::string& tree, const std::string& variant) const {
    return "http://127.0.0.1:" + m_port + "/" + tree + "/whl/" + variant;
  }
  const std::string& port() const { return m_port; }
  /// Returns the venvs' Python tag (cp311 on Debian 12).
  const std::string& cp() const { return m_cp; }
  /// Returns the path of a shared library of kernels the index built:
  /// "old.so" (sm_80, sm_90) or "new.so" (sm_80, sm_90, sm_120).
  std::filesystem::path library(const std::string& name) const { return m_root.path() / name; }
  /// Returns the server's log, for a failure message.
  std::string log() const { return read_file(m_root.path() / "server.log"); }

 private:
  FixIndex() = default;
  const Environment& env() const { return m_env; }
  void kernels(const std::string& name, const std::vector<std::string>& archs) const {
    const std::filesystem::path dir = m_root.path();
    std::vector<std::string> args = {
        "-shared", "-Xcompiler", "-fPIC", "-cudart", "none", (dir / "k.cu").string(), "-o", (dir / name).string()};
    for (const std::string& a : archs) args.insert(args.begin(), {"-gencode", "arch=compute_" + a + ",code=sm_" + a});
    const auto r = run(k_nvcc, args, env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // fake_wheel.py TREE/whl VARIANT NAME VERSION [more...].
  void wheel(const std::string& tree, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {k_fix_fixtures + "fake_wheel.py",
                                     (m_root.path() / "index" / tree / "whl").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(k_python, argv, env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  void torch(const std::string& tree, const std::string& variant, const std::string& so) const {
    wheel(tree, {variant, "torch", "2.7.1+" + variant, "--so", (m_root.path() / so).string()});
  }
  void build() {
    const std::filesystem::path dir = m_root.path();
    m_env = {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"HOME", dir.string()}};
    write_file(dir / "k.cu", "__global__ void torchfix_fake_kernel(float* x) { x[threadIdx.x] *= 2.0f; }\n");
    kernels("old.so", {"80", "90"});
    kernels("new.so", {"80", "90", "120"});
    for (const std::string tree : {"good", "bad", "slow", "guard"}) torch(tree, "cu126", "old.so");
    torch("good", "cu128", "new.so");
    torch("bad", "cu128", "old.so");
    torch("slow", "cu128", "new.so");
    wheel("guard", {"cpu", "torch", "2.7.1+cpu"});
    wheel("guard", {"cpu", "needs-cpu-torch", "1.0", "--requires", "torch==2.7.1+cpu"});
    m_cp = run(k_python, {"-c", "import sys; print('cp%d%d' % sys.version_info[:2], end='')"}, env()).out;
    const std::string other = m_cp == "cp312" ? "cp313" : "cp312";
    for (const auto& [tree, variant, version, cp] :
         std::vector<std::array<std::string, 4>>{{"holes", "cu126", "2.7.1+cu126", ""},
                                                 {"holes", "cu128", "2.7.1+cu128", other},
                                                 {"holes", "cu130", "2.14.0+cu130", m_cp},
                                                 {"holes", "cu132", "2.15.0+cu132", m_cp},
                                                 {"fits", "cu126", "2.7.1+cu126", ""},
                                                 {"fits", "cu128", "2.7.1+cu128", m_cp}}) {
      std::vector<std::string> args = {variant, "torch", version};
      if (!cp.empty()) args.insert(args.end(), {"--tag", cp + "-" + cp + "-manylinux_2_28_x86_64"});
      wheel(tree, args);
    }
    m_server = start({k_python, k_fix_fixtures + "index_server.py", (dir / "index").string(), (dir / "port").string()},
                     env(), dir / "server.log");
    for (int i = 0; i < 200 && !std::filesystem::exists(dir / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m_port = read_file(dir / "port");
  }

  TempDir m_root;
  Environment m_env;
  pid_t m_server = -1;
  std::string m_port;
  std::string m_cp;
};

/// Returns the environment the fix tests run programs in: PATH (nvcc's folder,
/// `extra` (uv's folder; may be empty), /usr/bin, /bin), HOME = `tmp` (so pip's
/// and uv's caches and configuration are the test's own), no pip version check.
inline Environment fix_env(const TempDir& tmp, const std::string& extra = {}) {
  return {{"PATH", "/usr/local/cuda/bin:" + (extra.empty() ? std::string() : extra + ":") + "/usr/bin:/bin"},
          {"HOME", tmp.path().string()},
          {"LANG", "C.UTF-8"},
          {"PIP_DISABLE_PIP_VERSION_CHECK", "1"},
          {"PIP_NO_INPUT", "1"},
          {"UV_PYTHON_DOWNLOADS", "never"},
          {"UV_NO_PROGRESS", "1"}};
}

/// Returns the folder of the first real uv on this process's PATH (pyenv
/// shims are skipped: they need pyenv's own variables), or "" when there is none.
inline std::string uv_folder() {
  const char* path = std::getenv("PATH");
  std::string rest = path ? path : "";
  rest += ":/usr/local/bin";
  for (std::size_t at = 0; at <= rest.size();) {
    const std::size_t colon = std::min(rest.find(':', at), rest.size());
    const std::string dir = rest.substr(at, colon - at);
    at = colon + 1;
    if (dir.empty() || dir.find("/shims") != std::string::npos) continue;
    if (::access((dir + "/uv").c_str(), X_OK) == 0) return dir;
  }
  return {};
}

/// Runs the tests of one suite on the shared index: skips without nvcc or
/// Python, fails when the server did not start. `m_uv_dir` is uv's folder
/// when the suite asked for uv (UsesUv::yes; it skips without uv), else "".
class FixIndexTest : public ::testing::Test {
 protected:
  enum class UsesUv { no, yes };
  explicit FixIndexTest(UsesUv uses_uv = UsesUv::no) : m_uses_uv(uses_uv) {}
  void SetUp() override {
    if (!std::filesystem::exists(k_nvcc)) GTEST_SKIP() << "no nvcc at " << k_nvcc << " to build the fake torch";
    if (!std::filesystem::exists(k_python)) GTEST_SKIP() << "no " << k_python << " to make venvs with";
    if (m_uses_uv == UsesUv::yes) {
      m_uv_dir = uv_folder();
      if (m_uv_dir.empty()) GTEST_SKIP() << "no uv on PATH (.ci/install-deps installs it)";
    }
    m_index = FixIndex::get();
    ASSERT_FALSE(m_index->port().empty()) << "the index server did not start: " << m_index->log();
  }
  /// Returns fix_env(tmp) with uv's folder on PATH.
  Environment env(const TempDir& tmp) const { return fix_env(tmp, m_uv_dir); }
  /// Runs the real binary with env(tmp), 600 s at most.
  ProcessResult torchfix(std::vector<std::string> args, const TempDir& tmp) const {
    return run(TORCHFIX_BINARY, std::move(args), env(tmp), std::chrono::seconds(600));
  }

  /// Checks that `r`, a `torchfix fix --gpu sm_120` of the venv `v` whose
  /// packages are now `frozen`, fixed it: torch 2.7.1+cu128 in place of the
  /// recorded +cu126, and the doctor agrees.
  void expect_fixed_to_cu128(const ProcessResult& r, const std::filesystem::path& v, const std::string& frozen,
                             const TempDir& tmp) const {
    const std::string py = (v / "bin/python").string();
    EXPECT_NE(r.out.find("fixed: the doctor finds no problem in " + py), std::string::npos) << r.out;
    EXPECT_NE(frozen.find("torch==2.7.1+cu128"), std::string::npos) << frozen;
    EXPECT_NE(read_file(v / ".torchfix/fix-before.txt").find("torch==2.7.1+cu126"), std::string::npos);
    const auto doctor = torchfix({"doctor", "--gpu", "sm_120", "--python", py}, tmp);
    EXPECT_NE(doctor.out.find("torch 2.7.1+cu128 runs on GPU 0"), std::string::npos) << doctor.out;
  }

  FixIndex* m_index = nullptr;
  std::string m_uv_dir;

 private:
  UsesUv m_uses_uv;
};

}  // namespace torchfix::testing
#endif  // _WIN32
