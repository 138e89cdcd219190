#pragma once
// Extensions in real venvs for the ExtensionsCli tests: a venv with a fake
// torch 2.6.0+cu126, setuptools projects that nvcc builds, libraries linking
// a real (empty) libc10.so, wheel-style installs with a RECORD, and the real
// binary run on them.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../build/test_support.hpp"

namespace torchfix::testing {

/// The nvcc the tests build extensions with.
inline const std::filesystem::path k_nvcc = "/usr/local/cuda/bin/nvcc";

/// Writes a project `name` whose build_ext compiles kernels with nvcc and
/// `flags` (as torch.utils.cpp_extension does, without needing torch).
inline void write_project(const std::filesystem::path& src, const std::string& name, const std::string& flags,
                          bool pyproject) {
  write_file(src / "setup.py",
             "import os, subprocess\n"
             "from setuptools import setup, Extension\n"
             "from setuptools.command.build_ext import build_ext\n"
             "class NvccBuild(build_ext):\n"
             "    def build_extension(self, ext):\n"
             "        out = self.get_ext_fullpath(ext.name)\n"
             "        os.makedirs(os.path.dirname(out), exist_ok=True)\n"
             "        subprocess.check_call(['" +
                 k_nvcc.string() +
                 "', '-shared', '-Xcompiler', '-fPIC',"
                 " *ext.extra_compile_args['nvcc'], *ext.sources, '-o', out])\n"
                 "setup(name='" +
                 name + "', version='0.1', packages=['" + name +
                 "'], install_requires=['torch>=2.4'],\n"
                 "      ext_modules=[Extension('" +
                 name + "._C', ['" + name +
                 "/k.cu'],"
                 " extra_compile_args={'nvcc': '" +
                 flags +
                 "'.split()})],\n"
                 "      cmdclass={'build_ext': NvccBuild})\n");
  write_file(src / name / "__init__.py", "");
  write_file(src / name / "k.cu",
             "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\nvoid launch(float* x) { k<<<1, 32>>>(x); }\n");
  if (pyproject) {
    write_file(
        src / "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=64\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n");
  }
}

/// Holds a venv with a fake torch 2.6.0+cu126 (version.py as wheels write it).
struct Venv {
  std::filesystem::path root;
  std::filesystem::path python;
  std::filesystem::path site;
};

inline std::optional<Venv> make_venv(const std::filesystem::path& dir) {
  Venv v{dir / "venv", dir / "venv/bin/python", {}};
  run_ok("/usr/bin/env", {"python3", "-m", "venv", v.root.string()}, dir);
  for (const auto& entry : std::filesystem::directory_iterator(v.root / "lib")) v.site = entry.path() / "site-packages";
  if (v.site.empty()) return std::nullopt;
  write_file(v.site / "torch/version.py",
             "from typing import Optional\n__version__ = '2.6.0+cu126'\ndebug = False\ncuda: Optional[str] = '12.6'\n"
             "git_version = '1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340'\nhip: Optional[str] = None\n");
  write_file(v.site / "torch/__init__.py", "from .version import __version__\n");
  return v;
}

/// Installs `wheel` (setuptools 65 needs it for PEP 517/660 builds); false when PyPI is out of reach.
inline bool install_wheel_package(const Venv& v) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{v.python.string(),
                              {"-m", "pip", "install", "-q", "wheel"},
                              read_process_environment(),
                              {},
                              std::chrono::seconds(120)});
  return r && r->exit_code == 0;
}

/// Runs `torchfix doctor --python` on `v` with what-if GPU `gpu` and `extra`
/// (PATH with /usr/local/cuda/bin, 180 s at most); a failed start fails the test.
inline ProcessResult doctor(const Venv& v, std::vector<std::string> extra = {}, const std::string& gpu = "H200") {
  std::vector<std::string> args = {"doctor", "--python", v.python.string(), "--gpu", gpu};
  args.insert(args.end(), extra.begin(), extra.end());
  SystemProcessRunner runner;
  const Environment env{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  auto r = runner.run(Command{TORCHFIX_BINARY, args, env, {}, std::chrono::seconds(180)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

/// Returns the first fix of `out` (doctor's text) whose line starts with
/// `start` ("      fix: Install torch 2."), up to the next fix; "" when none.
inline std::string fix_block(const std::string& out, const std::string& start) {
  const auto first = out.find(start);
  if (first == std::string::npos) return "";
  return out.substr(first, out.find("\n      fix: ", first + 1) - first);
}

/// Runs `torchfix doctor` on an empty snapshot with the what-if `args`
/// (60 s at most); a failed start fails the test.
inline ProcessResult what_if(std::vector<std::string> args) {
  TempDir dir;
  write_file(dir / "empty.json", R"({"schema_version": 1})");
  args.insert(args.begin(), {"doctor", "--snapshot", (dir / "empty.json").string()});
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY,
                              args,
                              Environment{{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}},
                              {},
                              std::chrono::seconds(60)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

/// Runs `torchfix doctor --snapshot` on tests/fixtures/snapshots/`name`
/// (60 s at most); a failed start fails the test.
inline ProcessResult doctor_snapshot(const std::string& name) {
  SystemProcessRunner runner;
  auto r = runner.run(
      Command{TORCHFIX_BINARY,
              {"doctor", "--snapshot", std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name},
              Environment{{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}},
              {},
              std::chrono::seconds(60)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

/// Builds an empty libc10.so in `dir`/stub (gcc) and returns the nvcc flags
/// that link it as torch.utils.cpp_extension links torch's: a DT_NEEDED
/// libc10.so even though nothing in the library calls it.
inline std::string link_libc10(const std::filesystem::path& dir) {
  write_file(dir / "stub/c10.c", "int c10_stub;\n");
  run_ok("/usr/bin/env", {"gcc", "-shared", "-fPIC", "-o", (dir / "stub/libc10.so").string(), "c10.c"}, dir / "stub");
  return "-Xlinker --no-as-needed -L" + (dir / "stub").string() + " -lc10";
}

/// Writes `files` (name -> built library) into site-packages as pip leaves a
/// wheel install of `name` `version`: the libraries under name/ and a RECORD naming them.
inline void install_as_wheel(const Venv& v, const std::string& name,
                             const std::map<std::string, std::filesystem::path>& files,
                             const std::string& version = "0.1") {
  std::filesystem::create_directories(v.site / name);
  std::string record;
  for (const auto& [file, built] : files) {
    std::filesystem::copy_file(built, v.site / name / file);
    record += name + "/" + file + ",sha256=x,1\n";
  }
  const std::filesystem::path info = v.site / (name + "-" + version + ".dist-info");
  write_file(info / "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n\n");
  write_file(info / "INSTALLER", "pip\n");
  write_file(info / "RECORD", record + info.filename().string() + "/RECORD,,\n");
}

/// Builds `name` (a shared library in `dir`) from the C++ `source` with g++,
/// linked to libc10.so as link_libc10 links it: a CPU-only C++ extension.
/// Returns its path; a failed build fails the test.
inline std::filesystem::path build_torch_linked(const std::filesystem::path& dir, const std::string& name,
                                                const std::string& source) {
  const std::filesystem::path out = dir / name;
  write_file(dir / (name + ".cpp"), source);
  std::vector<std::string> gxx = {"g++", "-shared", "-fPIC", "-o", out.string(), name + ".cpp"};
  // g++ takes the same -Xlinker/-L/-l words as nvcc.
  std::istringstream words(link_libc10(dir));
  for (std::string word; words >> word;) gxx.push_back(word);
  run_ok("/usr/bin/env", gxx, dir);
  return out;
}

}  // namespace torchfix::testing

/// Skips the test when nvcc or /usr/bin/python3 (for a venv) is missing.
#define REQUIRE_TOOLS()                                                                                 \
  do {                                                                                                  \
    if (!std::filesystem::exists(torchfix::testing::k_nvcc))                                            \
      GTEST_SKIP() << "no nvcc at " << torchfix::testing::k_nvcc;                                       \
    if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 for a venv"; \
  } while (0)
