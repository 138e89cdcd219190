// An extension built against another torch, with no torch pin and no local
// tag to say so (sgl-kernel 0.1.1 beside torch 2.5.1: sgl-project/sglang#5100).
// Two real libc10.so built here with g++ export different symbol sets: the
// extension links the one it was "built against", the venv's torch/lib holds
// the installed one. The probe reads both through their .dynsym; the doctor,
// run as the real binary, names the missing symbol and rebuilds against the
// installed torch. Saved snapshots (what the probe records) give the case of
// the report itself.

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../support/extension_venv.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;
using namespace testing;  // tests/support/extension_venv.hpp

// Builds dir/NAME/libc10.so from `source` and returns its folder.
fs::path build_libc10(const fs::path& dir, const std::string& name, const std::string& source) {
  write_file(dir / name / "c10.cpp", source);
  run_ok("/usr/bin/env", {"g++", "-shared", "-fPIC", "-o", "libc10.so", "c10.cpp"}, dir / name);
  return dir / name;
}

// Builds an extension calling c10::parse_schema(std::string const&, bool)
// and c10::kept(), linked against the libc10.so in `against`.
fs::path build_extension(const fs::path& dir, const fs::path& against) {
  write_file(dir / "ext.cpp",
             "#include <string>\nnamespace c10 { void parse_schema(const std::string&, bool); void kept(); }\n"
             "extern \"C\" int op() { c10::parse_schema(\"x\", true); c10::kept(); return 0; }\n");
  run_ok("/usr/bin/env",
         {"g++", "-shared", "-fPIC", "-o", "kext_C.so", "ext.cpp", "-Xlinker", "--no-as-needed",
          "-L" + against.string(), "-lc10"},
         dir);
  return dir / "kext_C.so";
}

// The torch the extension was built against has parse_schema(string, bool);
// the installed one only parse_schema(string), as torch 2.5 and 2.6 differ
// in torch::jit::parseSchemaOrName.
constexpr const char* k_built_against =
    "#include <string>\nnamespace c10 { void parse_schema(const std::string&, bool) {} void kept() {} }\n";
constexpr const char* k_installed =
    "#include <string>\nnamespace c10 { void parse_schema(const std::string&) {} void kept() {} }\n";

// Makes a venv in `dir` whose torch/lib/libc10.so is built from `installed`,
// holding kext 0.1 built against a libc10.so built from `built_against`, and
// runs the doctor on it with `extra`.
ProcessResult doctor_kext(const fs::path& dir, const char* installed, const char* built_against,
                          std::vector<std::string> extra = {}) {
  auto v = make_venv(dir);
  EXPECT_TRUE(v);
  if (!v) return {};
  fs::create_directories(v->site / "torch/lib");
  fs::copy_file(build_libc10(dir, "installed", installed) / "libc10.so", v->site / "torch/lib/libc10.so");
  install_as_wheel(*v, "kext", {{"_C.so", build_extension(dir, build_libc10(dir, "against", built_against))}});
  return doctor(*v, std::move(extra));
}

TEST(TorchSymbolsCli, AnExtensionBuiltAgainstAnotherTorchIsAProblemWithARebuild) {
  TORCHFIX_LINUX_ONLY("builds ELF shared libraries with g++ and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto r = doctor_kext(dir.path(), k_installed, k_built_against);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // The demangler's spelling of the string type differs between libstdc++
  // ("allocator<char> > const&") and the static build's libc++ ("allocator<char>>
  // const&"): the name and its bool are checked, not the spaces between.
  const auto title = r.out.find(
      "[✗] kext 0.1 was built against another torch: 1 symbol torch 2.6.0+cu126 does not export, "
      "e.g. c10::parse_schema(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char>");
  ASSERT_NE(title, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" const&, bool)\n", title), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kext 0.1 runs"), std::string::npos) << r.out;
  // No table knows where kext came from: the rebuild against this torch is shown, not guessed from PyPI.
  EXPECT_NE(r.out.find("Do first: rebuild kext 0.1 from its own source against the installed torch 2.6.0"),
            std::string::npos)
      << r.out;
}

TEST(TorchSymbolsCli, AnExtensionBuiltAgainstTheInstalledTorchIsNoProblem) {
  TORCHFIX_LINUX_ONLY("builds ELF shared libraries with g++ and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto r = doctor_kext(dir.path(), k_built_against, k_built_against, {"--json"});
  EXPECT_EQ(r.out.find("package.torch-abi"), std::string::npos) << r.out;
  // The probe recorded the check it made: 2 torch symbols needed, none missing.
  const auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  nlohmann::json checked;
  for (const auto& python : report["snapshot"]["pythons"]) {
    for (const auto& package : python["kernels"]) {
      if (package["distribution"] == "kext") checked = package["binaries"][0]["torch_symbols"];
    }
  }
  EXPECT_EQ(checked, nlohmann::json::parse(R"({"torch": "2.6.0+cu126", "needed": 2, "missing": 0, "examples": []})"))
      << r.out;
}

// sgl-project/sglang#5100 as the probe records it: sgl-kernel 0.1.1 (no
// torch pin, no local tag) beside torch 2.5.1+cu124 on an H100. The
// [[extension_pin]] rows (built_against) say 0.1.1 was built against torch
// 2.6.0 and 0.1.0 against 2.5.1: the first fix moves sgl-kernel to 0.1.0, as
// the thread did, not a rebuild.
TEST(TorchSymbolsCli, SglKernelBuiltForTorch26IsNotCalledFineBesideTorch251) {
  const ProcessResult r = doctor_snapshot("h100-torch251-sgl-kernel011-abi.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[✗] sgl-kernel 0.1.1 was built against another torch: 1 symbol torch 2.5.1+cu124 does not "
                       "export, e.g. torch::jit::parseSchemaOrName(std::string const&, bool)"),
            std::string::npos)
      << r.out;
  const auto fix =
      r.out.find("fix: Install sgl-kernel 0.1.0 in place of 0.1.1: the release built for the installed torch 2.5.1");
  ASSERT_NE(fix, std::string::npos) << r.out;
  const auto command = r.out.find("$ /home/u/venv/bin/python -m pip install --no-deps sgl-kernel==0.1.0", fix);
  ASSERT_NE(command, std::string::npos) << r.out;
  // The command is on the fix's next line (line ends not compared: torchfix.exe writes CRLF).
  EXPECT_EQ(r.out.find('\n', fix), r.out.rfind('\n', command)) << r.out;
  EXPECT_NE(r.out.find("Run first: /home/u/venv/bin/python -m pip install --no-deps sgl-kernel==0.1.0"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("rebuild sgl-kernel"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace torchfix
