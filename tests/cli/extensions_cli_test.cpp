// CUDA extensions the doctor must see, each built by the real nvcc for sm_80
// only and installed into a real venv by real setuptools/pip in one layout:
// `setup.py develop` (.egg-link), PEP 660 (`pip install -e`, __editable__ .pth
// and finder module), a RECORD install (`pip install .`) and a conda-meta
// record. Each test runs the real binary on the venv with a what-if H200 and
// checks the verdict and the first fix. A Windows .pyd (a PE image around a
// real nvcc fatbin) listed in a RECORD is read the same way.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "../support/extension_venv.hpp"
#include "../support/linux_only.hpp"
#include "../support/pe_image.hpp"
#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;
using namespace testing;  // tests/support/extension_venv.hpp

TEST(ExtensionsCli, SetupPyDevelopEggLinkIsFoundAndRebuiltInPlace) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const fs::path src = dir / "kext";
  write_project(src, "kext", "-gencode arch=compute_80,code=sm_80", false);
  testing::run_ok(v->python.string(), {"setup.py", "-q", "develop", "--no-deps"}, src);
  ASSERT_TRUE(fs::exists(v->site / "kext.egg-link"));
  auto r = doctor(*v);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("kext 0.1 cannot run on GPU 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kext 0.1 is an editable install of " + src.string()), std::string::npos) << r.out;
  // Its setup.py passes the arch itself, so TORCH_CUDA_ARCH_LIST alone would
  // rebuild the same kernels: the rebuild appends sm_90 through nvcc's own
  // NVCC_APPEND_FLAGS, and editing setup.py is the alternative.
  const std::string rebuild = "cd " + src.string() +
                              " && TORCH_CUDA_ARCH_LIST=9.0 NVCC_APPEND_FLAGS='-gencode arch=compute_90,code=sm_90' " +
                              v->python.string() + " -m pip install --no-build-isolation --no-deps -e .";
  EXPECT_NE(r.out.find("Run first: " + rebuild), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--no-binary kext"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Or, once, edit " + src.string() + "/setup.py: remove `-gencode arch=compute_80,code=sm_80`"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("add `-gencode arch=compute_90,code=sm_90`"), std::string::npos) << r.out;
  // The line run exactly as printed gives a binary with sm_90 SASS.
  if (!install_wheel_package(*v)) GTEST_SKIP() << "pip install wheel failed (PyPI out of reach?)";
  testing::run_ok("/bin/sh", {"-c", rebuild}, dir.path());
  auto after = doctor(*v);
  EXPECT_EQ(after.out.find("kext 0.1 cannot run"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("kext 0.1 runs on GPU 0"), std::string::npos) << after.out;
}

TEST(ExtensionsCli, Pep660EditableIsFollowedThroughItsFinderModule) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  if (!install_wheel_package(*v)) GTEST_SKIP() << "pip install wheel failed (PyPI out of reach?)";
  const fs::path src = dir / "kext2";
  write_project(src, "kext2", "-gencode arch=compute_80,code=sm_80", true);
  testing::run_ok(v->python.string(), {"-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."},
                  src);
  auto r = doctor(*v, {"--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << r.out;
  bool verdict = false;
  for (const auto& f : json["findings"]) {
    if (f["id"] == "package.arch" && f["package"] == "kext2" && f["severity"] == "problem") verdict = true;
  }
  EXPECT_TRUE(verdict) << r.out;
  bool provenance = false;
  for (const auto& python : json["snapshot"]["pythons"]) {
    for (const auto& k : python["kernels"]) {
      if (k["distribution"] != "kext2") continue;
      provenance = k["provenance"]["editable_root"] == src.string() && k["provenance"]["installer"] == "pip" &&
                   k["provenance"]["url"] == "file://" + src.string() &&
                   k["provenance"]["torch_pins"] == nlohmann::json::array({"torch>=2.4"});
    }
  }
  EXPECT_TRUE(provenance) << json["snapshot"]["pythons"].dump(1);
  EXPECT_NE(r.out.find("cd " + src.string() + " && TORCH_CUDA_ARCH_LIST=9.0"), std::string::npos) << r.out;
}

TEST(ExtensionsCli, CondaMetaRecordOwnsItsLibraries) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const fs::path lib = v->site / "ckext" / "_C.so";
  fs::create_directories(lib.parent_path());
  write_file(dir / "k.cu",
             "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"
             "void launch(float* x) { k<<<1, 32>>>(x); }\n");
  // sm_90 kernels (they run on the H200) linked against the shared CUDA 13 runtime.
  testing::run_ok(k_nvcc.string(),
                  {"-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-gencode", "arch=compute_90,code=sm_90",
                   (dir / "k.cu").string(), "-o", lib.string()},
                  dir.path());
  const std::string relative = fs::relative(lib, v->root).string();
  write_file(v->root / "conda-meta" / "ckext-0.1-cuda130_0.json",
             nlohmann::json{{"name", "ckext"},
                            {"version", "0.1"},
                            {"build", "cuda130_0"},
                            {"channel", "https://conda.anaconda.org/conda-forge/linux-64"},
                            {"files", {relative, "lib/python3/site-packages/ckext/__init__.py"}}}
                 .dump());
  auto r = doctor(*v, {"--json"});
  const auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << r.out << r.err;
  bool seen = false;
  for (const auto& python : json["snapshot"]["pythons"]) {
    for (const auto& k : python["kernels"]) {
      if (k["distribution"] != "ckext") continue;
      seen = k["provenance"]["installer"] == "conda" && k["provenance"]["conda_build"] == "cuda130_0" &&
             k["provenance"]["cuda_major"] == 13;
    }
  }
  EXPECT_TRUE(seen) << json["snapshot"]["pythons"].dump(1);
  EXPECT_NE(doctor(*v).out.find("ckext 0.1 runs on GPU 0"), std::string::npos);
  // Built with CUDA 13 (DT_NEEDED libcudart.so.13): a CUDA 12.8 driver cannot start it.
  auto old_driver = doctor(*v, {"--driver", "12.8"});
  EXPECT_EQ(old_driver.exit_code, 1);
  EXPECT_NE(old_driver.out.find("ckext 0.1 cannot run: it was built with CUDA 13 and the driver supports CUDA 12.8"),
            std::string::npos)
      << old_driver.out;
  EXPECT_NE(old_driver.out.find("Install an NVIDIA driver that supports CUDA 13"), std::string::npos) << old_driver.out;
}

TEST(ExtensionsCli, AWindowsPydListedInItsRecordIsJudgedByItsKernels) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  write_file(dir / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n");
  testing::run_ok(
      k_nvcc.string(),
      {"-fatbin", "-gencode", "arch=compute_80,code=sm_80", (dir / "k.cu").string(), "-o", (dir / "k.fatbin").string()},
      dir.path());
  const std::string pyd = "winext/_C.cp312-win_amd64.pyd";
  write_file(v->site / pyd, pe::pyd_with_fatbin(read_file(dir / "k.fatbin")));
  write_file(v->site / "winext/__init__.py", "");
  write_file(v->site / "winext-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: winext\nVersion: 0.1\n\n");
  write_file(v->site / "winext-0.1.dist-info/INSTALLER", "pip\n");
  write_file(v->site / "winext-0.1.dist-info/RECORD",
             pyd + ",,\nwinext/__init__.py,,\nwinext-0.1.dist-info/RECORD,,\n");
  auto r = doctor(*v, {"-v"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("winext 0.1 cannot run on GPU 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernels: sm_80 in 1 kernel modules"), std::string::npos) << r.out;
  // An sm_90 build of the same kernel runs: the verdict comes from the PE's fatbin, not from its name.
  testing::run_ok(
      k_nvcc.string(),
      {"-fatbin", "-gencode", "arch=compute_90,code=sm_90", (dir / "k.cu").string(), "-o", (dir / "k.fatbin").string()},
      dir.path());
  write_file(v->site / pyd, pe::pyd_with_fatbin(read_file(dir / "k.fatbin")));
  EXPECT_NE(doctor(*v).out.find("winext 0.1 runs on GPU 0"), std::string::npos);
}

// The most common report from ComfyUI and A1111 users: torch was upgraded,
// xformers was not ("xFormers was built for: PyTorch 2.5.1 ... (you have
// 2.6.0+cu126)"). Its pin is read from the tables; the fix is the release
// pinned to the installed torch, checked by diagnosing again.
TEST(ExtensionsCli, AnExtensionPinnedToAnotherTorchMovesToTheReleaseForTheInstalledOne) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  auto install = [&](const std::string& version) {
    const fs::path info = v->site / ("xformers-" + version + ".dist-info");
    write_file(info / "METADATA",
               "Metadata-Version: 2.1\nName: xformers\nVersion: " + version + "\nRequires-Dist: torch==2.5.1\n\n");
    write_file(info / "RECORD", "xformers/__init__.py,,\n");
    write_file(v->site / "xformers/__init__.py", "");
    return info;
  };
  const fs::path old = install("0.0.28.post3");
  auto r = doctor(*v, {}, "RTX 4090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("xformers 0.0.28.post3 was built for torch 2.5.1, not the installed 2.6.0+cu126"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fix: Install xformers 0.0.29.post3 in place of 0.0.28.post3: the release built for the "
                       "installed torch 2.6.0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(v->python.string() + " -m pip install --no-deps xformers==0.0.29.post3"), std::string::npos)
      << r.out;
  // With the release the fix names, the doctor finds nothing wrong with it.
  fs::remove_all(old);
  install("0.0.29.post3");
  r = doctor(*v, {}, "RTX 4090");
  EXPECT_EQ(r.out.find("was built for torch"), std::string::npos) << r.out;
}

// Real sm_89 kernels whose own METADATA says torch==2.5.1 beside torch 2.6.0:
// the METADATA is the evidence. A project the tables do not know is rebuilt
// from its own source (a line shown, not run: PyPI's project of that name may
// be someone else's); xformers, which they know, moves to its release for 2.6.0.
TEST(ExtensionsCli, AnExtensionsOwnMetadataPinIsReadWhenTheTablesDoNotKnowIt) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  write_file(dir / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n");
  auto install = [&](const std::string& name, const std::string& version, const std::string& pin) {
    const std::string lib = name + "/_C.so";
    fs::create_directories(v->site / name);
    testing::run_ok(k_nvcc.string(),
                    {"-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_89,code=sm_89",
                     (dir / "k.cu").string(), "-o", (v->site / lib).string()},
                    dir.path());
    const fs::path info = v->site / (name + "-" + version + ".dist-info");
    write_file(info / "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
                                      "\nRequires-Dist: torch " + pin + "\n\n");
    write_file(info / "RECORD", lib + ",,\n");
  };
  install("myext", "1.0", "==2.5.1");
  auto r = doctor(*v, {"-v"}, "RTX 4090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("myext 1.0 runs on GPU 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("myext 1.0 was built for torch 2.5.1, not the installed 2.6.0+cu126"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("its METADATA requires torch==2.5.1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# rebuild myext 1.0 from its own source against the installed torch 2.6.0"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("--no-binary myext"), std::string::npos) << r.out;
  // Pinned to the installed torch, it is fine.
  install("myext", "1.0", "==2.6.0");
  EXPECT_EQ(doctor(*v, {}, "RTX 4090").out.find("was built for torch"), std::string::npos);
  // A release of xformers the tables do not list, pinned by its METADATA.
  install("xformers", "0.0.99", "==2.5.1");
  r = doctor(*v, {}, "RTX 4090");
  EXPECT_NE(r.out.find("fix: Install xformers 0.0.29.post3 in place of 0.0.99: the release built for the installed "
                       "torch 2.6.0"),
            std::string::npos)
      << r.out;
}

TEST(ExtensionsCli, TwoDistributionsOwningTritonAreAFinding) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  // As pip leaves them after `pip install triton` beside torch's pytorch-triton.
  const std::string init = "__version__ = '3.2.0'\n";
  write_file(v->site / "triton/__init__.py", init);
  for (const auto& [name, version] : {std::pair{"triton", "3.2.0"}, {"pytorch-triton", "3.2.0+git4b3bb1f8"}}) {
    std::string folder = name;
    std::ranges::replace(folder, '-', '_');
    const fs::path info = v->site / (folder + "-" + version + ".dist-info");
    write_file(info / "METADATA",
               std::string("Metadata-Version: 2.1\nName: ") + name + "\nVersion: " + version + "\n\n");
    write_file(info / "INSTALLER", "pip\n");
    write_file(info / "RECORD", "triton/__init__.py,sha256=x," + std::to_string(init.size()) + "\n" +
                                    info.filename().string() + "/RECORD,,\n");
  }
  auto r = doctor(*v);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("pytorch-triton 3.2.0+git4b3bb1f8 and triton 3.2.0 both install the import package `triton`"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("-m pip uninstall -y pytorch-triton triton"), std::string::npos) << r.out;
}

// One distribution twice on the path, as a venv with a .pth to another
// site-packages leaves it (seen on the lent H100 with torchvision 0.22.0 over the
// image's 0.26.0, docs/gpu-runs/h100-torch-abi.md): Python imports the first
// copy on sys.path, and pip uninstalls that one: no "both" and no triton pin.
TEST(ExtensionsCli, OneDistributionTwiceOnThePathIsShadowingNotASharedImport) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  // torch and the second copy live in the other site-packages, as in the
  // image whose packages the venv reaches through its .pth.
  const fs::path other = dir.path() / "other-site";
  fs::create_directories(other);
  fs::rename(v->site / "torch", other / "torch");
  write_file(v->site / "other.pth", other.string() + "\n");
  // Each copy holds CUDA kernels, as torchvision's _C.so: the scan keeps it.
  write_file(dir.path() / "k.cu", "__global__ void answer(int* out) { *out = 42; }\n");
  run_ok(k_nvcc.string(), {"-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o", "_C.so", "k.cu"}, dir.path());
  for (const auto& [site, version] : {std::pair{v->site, "0.22.0"}, {other, "0.26.0"}}) {
    const std::string init = "__version__ = '" + std::string(version) + "'\n";
    write_file(site / "torchvision/__init__.py", init);
    fs::copy_file(dir.path() / "_C.so", site / "torchvision/_C.so");
    const fs::path info = site / ("torchvision-" + std::string(version) + ".dist-info");
    write_file(info / "METADATA",
               "Metadata-Version: 2.1\nName: torchvision\nVersion: " + std::string(version) + "\n\n");
    write_file(info / "INSTALLER", "pip\n");
    write_file(info / "RECORD", "torchvision/__init__.py,sha256=x," + std::to_string(init.size()) +
                                    "\ntorchvision/_C.so,sha256=x,1\n" + info.filename().string() + "/RECORD,,\n");
  }
  auto r = doctor(*v);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("torchvision is installed twice on this Python's path (0.22.0 and 0.26.0): the copy first on "
                       "sys.path is the one `import torchvision` loads"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("-m pip uninstall -y torchvision\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("both install the import package"), std::string::npos) << r.out;
}

TEST(ExtensionsCli, WithAnUnknownReleaseSaysSoAndStillAppliesTheFloor) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = what_if({"--gpu", "T4", "--torch", "2.6.0+cu124", "--with", "flash-attn==9.9.9"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("archs of flash-attn==9.9.9 unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flash-attn 9.9.9 cannot run on GPU 0 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("it needs compute capability >= 8.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 thing could not be checked:\n  archs of flash-attn==9.9.9 unknown"), std::string::npos)
      << r.out;
  // vLLM's floor is 7.0: 0.5.0 has no row, the rule still applies.
  auto vllm = what_if({"--gpu", "P100", "--torch", "2.6.0+cu124", "--with", "vllm==0.5.0"});
  EXPECT_EQ(vllm.exit_code, 1) << vllm.out << vllm.err;
  EXPECT_NE(vllm.out.find("vllm 0.5.0 cannot run on GPU 0 (P100, 6.0): it needs compute capability >= 7.0"),
            std::string::npos)
      << vllm.out;
  // Nothing wrong in what was checked is not an all-clear: the summary names what was not.
  auto unknown =
      what_if({"--gpu", "H200", "--driver", "570.124.06", "--torch", "2.6.0+cu124", "--with", "some-kernels==1.0"});
  EXPECT_EQ(unknown.exit_code, 0) << unknown.out << unknown.err;
  EXPECT_EQ(unknown.out.find("No issues found"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("No problem found in what could be checked, but 1 thing could not be:\n"
                             "  archs of some-kernels==1.0 unknown (no row in recipes/extensions.toml)"),
            std::string::npos)
      << unknown.out;
}

TEST(ExtensionsCli, InductorFloorBelowSevenIsAFindingWithItsFix) {
  auto r = what_if({"--gpu", "P100", "--torch", "2.6.0+cu124"});
  EXPECT_NE(r.out.find("torch.compile cannot use GPU 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export TORCH_COMPILE_DISABLE=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float16 instead of bfloat16"), std::string::npos) << r.out;
  auto fine = what_if({"--gpu", "T4", "--torch", "2.6.0+cu124"});
  EXPECT_EQ(fine.out.find("torch.compile cannot use"), std::string::npos) << fine.out;
}

// xformers pins one torch release exactly (Requires-Dist torch==X, read from
// each release's METADATA by recipes/refresh_pins.py). On an RTX 5090 with
// torch 2.5.1 and xformers 0.0.28.post3 the first fix is the newest torch
// xformers has a release for, with xformers moved in the same fix; before,
// it was the newest torch with xformers rebuilt at 0.0.28.post3, a release
// whose own pin refuses that torch.
TEST(ExtensionsCli, APinnedExtensionMovesWithTorchInsteadOfBeingRebuilt) {
  auto r = what_if({"--gpu", "RTX 5090", "--torch", "2.5.1+cu124", "--with", "xformers==0.0.28.post3"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string fix = fix_block(r.out, "      fix: ");
  ASSERT_FALSE(fix.empty()) << r.out;
  EXPECT_NE(fix.find("Install torch 2.10.x"), std::string::npos) << fix;
  EXPECT_NE(fix.find("xformers 0.0.28.post3 moves to 0.0.34, the release for the new torch"), std::string::npos) << fix;
  EXPECT_NE(fix.find("not a newer torch: xformers 0.0.28.post3 has no release for torch 2.1"), std::string::npos)
      << fix;
  EXPECT_NE(fix.find("pip install --no-deps xformers==0.0.34"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("torchfix build xformers"), std::string::npos) << fix;
}

// A C++ extension links torch's libraries (DT_NEEDED libc10.so, as
// torch.utils.cpp_extension links them) and so breaks on any other torch
// release, kernels or not. Built by the real nvcc for sm_120 against a real
// (empty) libc10.so: it runs on the RTX 5090, but the fix that moves torch
// to a release with sm_120 must rebuild it against that torch. Before, the
// fix left it out and the next `import` failed with an undefined symbol.
// The same extension without libc10 is not touched.
TEST(ExtensionsCli, AnExtensionLinkingTorchIsRebuiltWhenTheFixMovesTorch) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const std::string arch = "-gencode arch=compute_120,code=sm_120";
  const fs::path linked = dir / "abiext";
  const fs::path plain = dir / "cext";
  write_project(linked, "abiext", arch + " " + link_libc10(dir.path()), false);
  write_project(plain, "cext", arch, false);
  for (const fs::path& src : {linked, plain}) {
    testing::run_ok(v->python.string(), {"setup.py", "-q", "develop", "--no-deps"}, src);
  }
  auto r = doctor(*v, {"--json"}, "RTX 5090");
  const auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << r.out << r.err;
  std::map<std::string, bool> links;
  for (const auto& python : json["snapshot"]["pythons"]) {
    for (const auto& k : python["kernels"]) links[k["distribution"]] = k["binaries"][0].value("links_torch", false);
  }
  EXPECT_EQ(links, (std::map<std::string, bool>{{"abiext", true}, {"cext", false}})) << r.out;
  auto text = doctor(*v, {}, "RTX 5090");
  EXPECT_EQ(text.exit_code, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("abiext 0.1 runs on GPU 0"), std::string::npos) << text.out;
  const std::string fix = fix_block(text.out, "      fix: Install torch 2.");
  ASSERT_FALSE(fix.empty()) << text.out;
  EXPECT_NE(fix.find("then abiext 0.1 is built against the old torch: rebuild it against the new one"),
            std::string::npos)
      << fix;
  // Its setup.py passes -gencode for sm_80: nvcc appends sm_120 itself.
  EXPECT_NE(fix.find("cd " + linked.string() +
                     " && TORCH_CUDA_ARCH_LIST=12.0 NVCC_APPEND_FLAGS='-gencode arch=compute_120,code=sm_120' " +
                     v->python.string() + " -m pip install --no-build-isolation --no-deps -e ."),
            std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("cext"), std::string::npos) << fix;
}

// torchvision links libc10 too, but the wheel step reinstalls it at the new
// release: it is never rebuilt. A torch-linked distribution installed from
// a wheel (a RECORD, no table row) is not rebuilt from PyPI under its name,
// which could fetch someone else's project: the step is shown, not run.
TEST(ExtensionsCli, TorchvisionMovesWithTheWheelAndAnUnknownTorchLinkedWheelIsOnlyShown) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const std::string flags = "-gencode arch=compute_120,code=sm_120 " + link_libc10(dir.path());
  write_project(dir / "torchvision", "torchvision", flags, false);
  testing::run_ok(v->python.string(), {"setup.py", "-q", "develop", "--no-deps"}, dir / "torchvision");
  // privext 0.1 as pip leaves a wheel install: its library and a RECORD naming it.
  write_project(dir / "privext", "privext", flags, false);
  testing::run_ok(v->python.string(), {"setup.py", "-q", "build_ext", "--inplace"}, dir / "privext");
  fs::path built;
  for (const auto& e : fs::directory_iterator(dir / "privext/privext")) {
    if (e.path().extension() == ".so") built = e.path();
  }
  ASSERT_FALSE(built.empty());
  fs::create_directories(v->site / "privext");
  fs::copy_file(built, v->site / "privext/_C.so");
  const fs::path info = v->site / "privext-0.1.dist-info";
  write_file(info / "METADATA", "Metadata-Version: 2.1\nName: privext\nVersion: 0.1\n\n");
  write_file(info / "INSTALLER", "pip\n");
  write_file(info / "RECORD", "privext/_C.so,sha256=x,1\nprivext-0.1.dist-info/RECORD,,\n");
  auto r = doctor(*v, {}, "RTX 5090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string fix = fix_block(r.out, "      fix: Install torch 2.");
  ASSERT_FALSE(fix.empty()) << r.out;
  EXPECT_NE(fix.find(".*' torchvision --index-url"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("torchvision 0.1 is built against"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("cd " + (dir / "torchvision").string()), std::string::npos) << fix;
  EXPECT_NE(fix.find("privext 0.1 links the old torch's C++ libraries"), std::string::npos) << fix;
  EXPECT_NE(fix.find("$ # rebuild privext 0.1 from its own source against the new torch"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("--no-binary privext"), std::string::npos) << fix;
}

// Extensions that link torch but hold no kernels move with torch too: a
// CPU-only C++ extension (g++, DT_NEEDED libc10.so) and one whose kernels are
// in a second library that does not link torch (nvcc, sm_120). Before, the
// scan dropped every library without kernels, so the first was not seen at
// all and the second looked torch-free: the fix moving torch left both to
// fail at import with an undefined symbol.
TEST(ExtensionsCli, ATorchLinkedLibraryWithoutKernelsMovesWithTorch) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const fs::path cpu = build_torch_linked(dir.path(), "cpu_C.so", "int cpu_op(int x) { return 2 * x; }\n");
  write_file(dir / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n");
  testing::run_ok(k_nvcc.string(),
                  {"-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_120,code=sm_120", "k.cu", "-o",
                   (dir / "kernels.so").string()},
                  dir.path());
  install_as_wheel(*v, "cpuext", {{"_C.so", cpu}});
  install_as_wheel(*v, "splitext", {{"_C.so", cpu}, {"_kernels.so", dir / "kernels.so"}});
  // torch's own libtorch_python.so links libc10 too, but it is no extension:
  // it moves with torch.
  install_as_wheel(*v, "torch", {{"libtorch_python.so", cpu}});
  write_file(v->site / "torch-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0+cu126\n\n");
  auto r = doctor(*v, {"--json"}, "RTX 5090");
  const auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << r.out << r.err;
  std::map<std::string, int> linked;
  for (const auto& python : json["snapshot"]["pythons"]) {
    for (const auto& k : python["kernels"]) {
      for (const auto& b : k["binaries"]) linked[k["distribution"]] += b.value("links_torch", false) ? 1 : 0;
    }
  }
  EXPECT_EQ(linked, (std::map<std::string, int>{{"cpuext", 1}, {"splitext", 1}})) << r.out;
  auto text = doctor(*v, {}, "RTX 5090");
  EXPECT_EQ(text.exit_code, 1) << text.out << text.err;
  const std::string fix = fix_block(text.out, "      fix: Install torch 2.");
  ASSERT_FALSE(fix.empty()) << text.out;
  for (const std::string name : {"cpuext", "splitext"}) {
    EXPECT_NE(fix.find(name + " 0.1 links the old torch's C++ libraries"), std::string::npos) << fix;
    EXPECT_NE(fix.find("$ # rebuild " + name + " 0.1 from its own source against the new torch"), std::string::npos)
        << fix;
  }
  EXPECT_EQ(text.out.find("torch 2.6.0+cu126 links"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("rebuild torch "), std::string::npos) << text.out;
}

// PyG's and OpenMMLab's extensions live on their projects' wheel indexes, one
// page per torch and CUDA variant (recipes/extensions.toml [[project_index]]).
// torch-scatter and mmcv, each a g++-built library linking libc10, installed
// as pip leaves wheels, on an RTX 5090: the fix moves torch to the newest
// release PyG has a page for (not the newest torch, which would leave
// torch-scatter to a source build), torch-scatter moves to its wheel on that
// page, and mmcv, whose index stops at torch 2.4, is rebuilt from its sdist.
// Before, both got a shown-only rebuild line.
TEST(ExtensionsCli, ProjectIndexExtensionsMoveToThePageOfTheNewTorch) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  const fs::path op = build_torch_linked(dir.path(), "op_C.so", "int op(int x) { return x + 1; }\n");
  install_as_wheel(*v, "torch_scatter", {{"_scatter_cuda.so", op}});
  install_as_wheel(*v, "mmcv", {{"_ext.so", op}});
  // Distribution names as their METADATA spells them.
  write_file(v->site / "torch_scatter-0.1.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: torch-scatter\nVersion: 2.1.2+pt26cu126\n\n");
  write_file(v->site / "mmcv-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: mmcv\nVersion: 2.1.0\n\n");
  auto r = doctor(*v, {}, "RTX 5090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string fix = fix_block(r.out, "      fix: Install torch 2.");
  ASSERT_FALSE(fix.empty()) << r.out;
  const auto at = fix.find("Install torch 2.") + 14;
  const std::string release = fix.substr(at, fix.find(".x", at) - at);  // "2.10"
  const auto index = fix.find("https://download.pytorch.org/whl/cu") + 33;
  const std::string variant = fix.substr(index, fix.find_first_of(" \n'", index) - index);  // "cu128"
  const std::string page = "https://data.pyg.org/whl/torch-" + release + ".0+" + variant + ".html";
  // The page is a row of the shipped table, and the next torch has none.
  const Knowledge& k = repo_knowledge();
  const Version chosen = *Version::parse(release);
  EXPECT_EQ(k.project_page("torch-scatter", chosen, variant), page);
  EXPECT_EQ(k.project_page("torch-scatter", Version({chosen.major(), chosen.minor() + 1}), variant), "");
  EXPECT_NE(fix.find("torch-scatter 2.1.2+pt26cu126 moves to its wheel for torch " + release + "+" + variant +
                     " from " + page),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("-m pip install --force-reinstall --no-deps --only-binary torch-scatter torch-scatter -f " + page),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("mmcv 2.1.0 has no wheel for torch " + release + "+" + variant +
                     " (none exists: recipes/extensions.toml [[project_index]] has pages of its index for torch 1.13 "
                     "to 2.4)"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("--no-binary mmcv --no-deps --force-reinstall mmcv==2.1.0"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("--no-binary torch-scatter"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("# rebuild"), std::string::npos) << fix;
}

}  // namespace
}  // namespace torchfix
