// A property of every printed fix (issue 16, "Done means"): each package spec
// a fix installs exists in the tables (a torch release on that index for that
// platform, an extension release pinned to a torch, an image tag), and each
// rebuild names a source that exists (a recipe `torchfix build` has, an
// editable checkout the snapshot holds, an sdist spec without a local label),
// and each project-index wheel is on a page of [[project_index]] for the torch
// the same fix installs.
// Checked through the real binary on every snapshot fixture and on what-if
// stacks with the extensions the tables know.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "../build/test_support.hpp"
#include "../support/extension_venv.hpp"
#include "../support/linux_only.hpp"
#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::repo_knowledge;

ProcessResult torchfix(std::vector<std::string> args) {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}, {"LANG", "C.UTF-8"}};
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

// The editable checkouts the report's snapshot holds (the fix may rebuild those in place).
std::set<std::string> editable_roots(const nlohmann::json& snapshot) {
  std::set<std::string> out;
  for (const auto& py : snapshot.value("pythons", nlohmann::json::array())) {
    for (const auto& p : py.value("kernels", nlohmann::json::array())) {
      const auto& provenance = p.value("provenance", nlohmann::json::object());
      if (provenance.contains("editable_root")) out.insert(provenance["editable_root"].get<std::string>());
    }
  }
  return out;
}

// The kinds of command check_command recognises, as bits: a test asserts
// that each kind was met, so a pattern that matches nothing cannot pass.
enum Kind : unsigned {
  k_index = 1,
  k_pin = 2,
  k_build = 4,
  k_sdist = 8,
  k_editable = 16,
  k_image = 32,
  k_project_page = 64,
  k_git = 128
};

// Checks one printed command against the tables; `platform` is the
// Situation's wheel platform ("x86_64", "aarch64", "windows"); `fix_torch` the
// major.minor of the torch its fix installs ("": none). Returns the kinds it was.
unsigned check_command(const std::string& command, const std::string& platform, const std::set<std::string>& roots,
                       const std::string& fix_torch) {
  unsigned kinds = 0;
  SCOPED_TRACE(command);
  const Knowledge& k = repo_knowledge();
  std::smatch m;
  static const std::regex torch_spec(R"(torch==(\d+\.\d+)(\.\d+)?(\.\*)?)");
  static const std::regex index(R"(--index-url https://download\.pytorch\.org/whl/(\w+))");
  static const std::regex nightly(R"(--index-url https://download\.pytorch\.org/whl/nightly/(\w+))");
  if (std::regex_search(command, m, nightly)) {
    // The nightly channel keeps recent builds only: no dev version is named,
    // --pre lets pip take one, and the variant is one the tables know here.
    kinds |= k_index;
    const std::string variant = m[1];
    EXPECT_TRUE(command.find(" --pre ") != std::string::npos ||
                command.find("--prerelease allow") != std::string::npos);
    EXPECT_EQ(command.find(".dev"), std::string::npos) << "a nightly install names a dev build";
    EXPECT_TRUE(std::ranges::any_of(
        k.wheels, [&](const WheelVariant& w) { return w.variant == variant && w.platform == platform; }))
        << "no " << variant << " wheel for " << platform << " in the tables";
  } else if (std::regex_search(command, m, index)) {
    kinds |= k_index;
    const std::string variant = m[1];
    const bool named = std::regex_search(command, m, torch_spec);
    EXPECT_TRUE(named) << "an index install names no torch release";
    const auto release = Version::parse(named ? m[1].str() : "0");
    EXPECT_TRUE(std::ranges::any_of(k.wheels,
                                    [&](const WheelVariant& w) {
                                      return w.variant == variant && w.platform == platform &&
                                             w.covers_release(*release);
                                    }))
        << "no " << variant << " wheel of torch " << release->str() << " for " << platform << " in the tables";
  }
  static const std::regex no_deps(R"(pip install --no-deps '?([A-Za-z0-9_.-]+)==([^' ]+))");
  if (std::regex_search(command, m, no_deps)) {
    kinds |= k_pin;
    const std::string name = m[1];
    const std::string version = m[2];
    // Triton's pin comes from the installed torch's own METADATA, else [[torch_triton]].
    if (name == "triton") {
      EXPECT_TRUE(std::ranges::any_of(
          k.torch_tritons, [&](const TorchTriton& t) { return t.distribution == name && t.triton.str() == version; }))
          << name << "==" << version << " is no release in recipes/triton-ptxas.toml [[torch_triton]]";
    } else if (name != "pytorch-triton") {
      // A release named by [[extension_pin]], or the first release with a per-CUDA library ([[cuda_library]]).
      const bool pinned = std::ranges::any_of(
          k.extension_pins, [&](const ExtensionPin& e) { return e.distribution == name && e.version == version; });
      const bool first_with_library = std::ranges::any_of(
          k.cuda_libraries, [&](const CudaLibrary& c) { return c.distribution == name && c.first.str() == version; });
      EXPECT_TRUE(pinned || first_with_library)
          << name << "==" << version
          << " is not a release in recipes/torch-wheels.toml [[extension_pin]] nor recipes/extensions.toml "
             "[[cuda_library]]";
    }
  }
  // A wheel of a project's index: the page is a row of [[project_index]]
  // that lists the package, for the torch release the same fix installs.
  // From the page beside the indexes (--only-binary PKG PKG) or alone (--no-index PKG: pytorch3d's).
  static const std::regex project_page(R"((?:--only-binary (\S+)|--no-index) (\S+) -f '?([^' ]+))");
  if (std::regex_search(command, m, project_page)) {
    kinds |= k_project_page;
    const std::string name = m[2];
    const std::string page = m[3];
    if (m[1].matched) {
      EXPECT_EQ(m[1].str(), name);
    }
    // A page that names the Python (pytorch3d's) is one of its Pythons' pages.
    const auto on_page = [&](const ProjectIndexPage& p, const std::string& v) {
      if (p.pythons.empty()) return p.url(v) == page;
      return std::ranges::any_of(p.pythons, [&](const std::string& py) { return p.url(v, py) == page; });
    };
    EXPECT_TRUE(std::ranges::any_of(k.project_index,
                                    [&](const ProjectIndexPage& p) {
                                      return std::ranges::find(p.distributions, name) != p.distributions.end() &&
                                             std::ranges::any_of(p.variants, [&](const std::string& v) {
                                               return on_page(p, v) &&
                                                      (fix_torch.empty() || p.serves(*Version::parse(fix_torch)));
                                             });
                                    }))
        << page << " is no page of " << name << "'s index for torch " << fix_torch
        << " in recipes/extensions.toml [[project_index]]";
  }
  static const std::regex build(R"(^torchfix build ([A-Za-z0-9_][A-Za-z0-9_-]*))");
  if (std::regex_search(command, m, build)) {
    kinds |= k_build;
    EXPECT_NE(k.build_recipe(m[1].str()), nullptr) << "no recipe " << m[1];
  }
  // A project with no sdist of its own on PyPI: its repository at a release
  // tag, by `torchfix build --repo` or pip's direct git reference.
  static const std::regex git(R"((?:^torchfix build --repo '?([^' ]+)'? --ref '?([^' ]+)|@ git\+([^@' ]+)@([^' ]+)))");
  if (std::regex_search(command, m, git)) {
    kinds |= k_git;
    const std::string repository = m[1].matched ? m[1].str() : m[3].str();
    const std::string tag = m[1].matched ? m[2].str() : m[4].str();
    const auto row =
        std::ranges::find_if(k.project_sources, [&](const ProjectSource& p) { return p.repository == repository; });
    EXPECT_NE(row, k.project_sources.end()) << repository << " is no [[project_source]] repository";
    if (row != k.project_sources.end()) {
      const std::string prefix = row->tag_format.substr(0, row->tag_format.find("{version}"));
      EXPECT_TRUE(tag.starts_with(prefix) || std::ranges::find(row->odd_tags, tag) != row->odd_tags.end()) << tag;
    }
    EXPECT_EQ(tag.find('+'), std::string::npos) << "a local version is no release tag: " << tag;
  }
  static const std::regex sdist(R"(--no-binary (\S+) .*--force-reinstall '?([^' ]+))");
  if (std::regex_search(command, m, sdist)) {
    kinds |= k_sdist;
    const std::string spec = m[2];
    EXPECT_TRUE(spec.starts_with(m[1].str())) << spec;
    EXPECT_EQ(spec.find('+'), std::string::npos) << "a local version names a wheel, never an sdist: " << spec;
  }
  static const std::regex editable(R"(^cd '?([^' &]+)'? && )");
  if (std::regex_search(command, m, editable)) {
    kinds |= k_editable;
    EXPECT_TRUE(roots.contains(m[1].str())) << m[1] << " is no editable checkout of the snapshot";
  }
  static const std::regex image(R"((docker (?:run|pull)) .*?(nvcr\.io/nvidia/pytorch|vllm/vllm-openai):(\S+))");
  if (std::regex_search(command, m, image)) {
    kinds |= k_image;
    const std::string repository = m[2];
    std::string tag = m[3];
    if (repository == "vllm/vllm-openai") {
      EXPECT_TRUE(std::ranges::any_of(k.app_images.images, [&](const AppImage& a) { return a.tag == tag; })) << tag;
    } else {
      tag = tag.substr(0, tag.find("-py3"));
      EXPECT_NE(k.ngc.release(tag), nullptr) << tag;
    }
  }
  return kinds;
}

// Checks every command of every fix in one doctor report; returns the kinds met.
unsigned check_report(const std::vector<std::string>& args, const nlohmann::json& snapshot) {
  auto r = torchfix(args);
  EXPECT_NE(r.exit_code, 2) << r.err;
  if (r.exit_code == 2) return 0;
  const auto j = nlohmann::json::parse(r.out);
  const std::string platform = j["situation"]["wheel_platform"];
  const auto roots = editable_roots(snapshot);
  unsigned kinds = 0;
  for (const auto& f : j["findings"]) {
    for (const auto& fix : f["fixes"]) {
      std::string fix_torch;
      static const std::regex torch_release(R"(torch==(\d+\.\d+(?:\.\d+)?))");
      for (const auto& c : fix["commands"]) {
        std::smatch m;
        const std::string text = c.get<std::string>();
        if (fix_torch.empty() && std::regex_search(text, m, torch_release)) fix_torch = m[1];
      }
      for (const auto& c : fix["commands"]) kinds |= check_command(c.get<std::string>(), platform, roots, fix_torch);
    }
  }
  return kinds;
}

TEST(StackProperty, EveryFixOnEveryFixtureInstallsWhatTheTablesHold) {
  unsigned kinds = 0;
  for (const auto& entry : fs::directory_iterator(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    const auto snapshot = nlohmann::json::parse(in);
    kinds |= check_report({"doctor", "--json", "--snapshot", entry.path().string()}, snapshot);
  }
  const unsigned all = k_index | k_build | k_sdist | k_image | k_project_page;
  EXPECT_EQ(kinds & all, all);
}

TEST(StackProperty, EveryFixOfAWhatIfStackInstallsWhatTheTablesHold) {
  const std::vector<std::vector<std::string>> stacks = {
      {"--gpu", "RTX 5090", "--torch", "2.5.1+cu124", "--with", "xformers==0.0.28.post3"},
      {"--gpu", "RTX 5090", "--torch", "2.6.0+cu124", "--with", "vllm==0.8.1"},
      {"--gpu", "B200", "--torch", "2.7.0+cu126", "--with", "xformers==0.0.30", "--with", "vllm==0.9.1"},
      {"--gpu", "GTX 1080 Ti", "--torch", "2.8.0+cu128", "--with", "xformers==0.0.32.post2"},
      {"--gpu", "H100", "--torch", "2.4.0+cu121", "--with", "flash-attn==2.6.3"},
      {"--gpu", "T4", "--torch", "2.6.0+cu124", "--with", "flash-attn==2.7.4"},
      {"--gpu", "RTX 5090", "--torch", "2.6.0+cu126", "--with", "causal-conv1d==1.5.0", "--platform", "aarch64"},
  };
  unsigned kinds = 0;
  for (const auto& stack : stacks) {
    std::vector<std::string> args = {"doctor", "--json"};
    args.insert(args.end(), stack.begin(), stack.end());
    std::string trace;
    for (const auto& a : stack) trace += a + " ";
    SCOPED_TRACE(trace);
    kinds |= check_report(args, nlohmann::json::object());
  }
  EXPECT_EQ(kinds & (k_index | k_pin), k_index | k_pin);
}

// A real venv holding one torch-linked extension of each project index
// (g++ libraries linking libc10, as pip leaves wheels) on an RTX 5090, which
// its torch 2.6.0+cu126 cannot run: every fix moving torch installs pages of
// [[project_index]] (torch-scatter's) and builds from [[project_source]] tags
// (detectron2's, pytorch3d's and kaolin's: no page for the new torch).
TEST(StackProperty, EveryFixOfAProjectIndexStackInstallsWhatTheTablesHold) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  testing::TempDir dir;
  auto v = testing::make_venv(dir.path());
  ASSERT_TRUE(v);
  const fs::path op = testing::build_torch_linked(dir.path(), "op_C.so", "int op(int x) { return x + 1; }\n");
  // (folder, distribution name, version)
  const std::vector<std::array<std::string, 3>> stack = {{"detectron2", "detectron2", "0.6+cu113"},
                                                         {"pytorch3d", "pytorch3d", "0.7.8"},
                                                         {"kaolin", "kaolin", "0.18.0"},
                                                         {"torch_scatter", "torch-scatter", "2.1.2+pt26cu126"}};
  for (const auto& [folder, name, version] : stack) {
    testing::install_as_wheel(*v, folder, {{"_C.so", op}});
    testing::write_file(v->site / (folder + "-0.1.dist-info/METADATA"),
                        "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n\n");
  }
  const unsigned kinds =
      check_report({"doctor", "--json", "--python", v->python.string(), "--gpu", "RTX 5090"}, nlohmann::json::object());
  EXPECT_EQ(kinds & (k_index | k_git | k_project_page), k_index | k_git | k_project_page);
}

}  // namespace
}  // namespace torchfix
