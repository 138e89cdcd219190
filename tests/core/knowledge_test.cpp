// The knowledge tables check themselves. The schema: a typo (an unknown array
// or key, a wrong type, a word outside a key's list) is an error naming the
// file and line. The cross-checks on the shipped tables: each wheel's and
// container's arch list is what its CUDA's nvcc can emit, each GPU has a first
// toolkit and a driver generation, each CUDA a driver floor, each release its
// Python range and PyPI default, rows of one key do not overlap, every row
// carries its source. A failure names the row to fix (docs/knowledge.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "../support/repo_knowledge.hpp"
#include "core/facts/knowledge.hpp"

namespace torchfix {
namespace {

using testing::repo_knowledge;

std::string error_of(const std::string& file, const std::string& text) {
  auto parsed = parse_knowledge({{file, text}});
  EXPECT_FALSE(parsed) << file << " parsed:\n" << text;
  return parsed ? std::string() : parsed.error().message;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string k_wheel =
    "[[wheel]]\nmin = \"2.7\"\nmax = \"2.7\"\nvariant = \"cu128\"\narch_list = \"9.0\"\n"
    "confidence = \"measured\"\nsource = \"s\"\n";

TEST(KnowledgeSchema, AGoodRowParses) {
  auto parsed = parse_knowledge({{"/d/recipes/torch-wheels.toml", k_wheel + "platform = \"aarch64\"\n"}});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->wheels.at(0).platform, "aarch64");
}

TEST(KnowledgeSchema, TyposAreErrorsWithFileLineAndWhatToDo) {
  const std::string file = "/d/recipes/torch-wheels.toml";
  std::string m = error_of(file, "\n" + std::string("[[wheels]]") + k_wheel.substr(9));
  EXPECT_TRUE(has(m, "torch-wheels.toml:2: ")) << m;
  EXPECT_TRUE(has(m, "[[wheels]]") && has(m, "did you mean [[wheel]]?")) << m;
  m = error_of(file, k_wheel + "platfrom = \"aarch64\"\n");
  EXPECT_TRUE(has(m, "torch-wheels.toml:8: ")) << m;
  EXPECT_TRUE(has(m, "'platfrom'") && has(m, "did you mean 'platform'?")) << m;
  std::string unverified = k_wheel;
  unverified.replace(unverified.find("measured"), 8, "unverifed");
  m = error_of(file, unverified);
  EXPECT_TRUE(has(m, "torch-wheels.toml:6: ")) << m;
  EXPECT_TRUE(has(m, "'unverifed'") && has(m, "did you mean 'UNVERIFIED'?")) << m;
  m = error_of(file, k_wheel + "platform = \"ppc64le\"\n");
  EXPECT_TRUE(has(m, ":8: ") && has(m, "'x86_64', 'aarch64', 'windows'")) << m;
  m = error_of("/d/recipes/gpus.toml", "[[gpu]]\ncc = 9.0\nnames = [\"H100\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "gpus.toml:2: ") && has(m, "'cc' must be a compute capability string")) << m;
  m = error_of("/d/recipes/gpus.toml", "[[gpu]]\ncc = \"9.0\"\nnames = \"H100\"\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "gpus.toml:3: ") && has(m, "list of strings")) << m;
  m = error_of("/d/recipes/gpus.toml", "[[gpu]]\ncc = \"8.x\"\nnames = [\"A100\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "gpus.toml:2: ") && has(m, "'8.x' is not a compute capability; write it like")) << m;
  m = error_of("/d/recipes/toolkits.toml", "[[driver_floor]]\ncuda = \"13.x\"\nlinux = \"580\"\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "toolkits.toml:2: ") && has(m, "'13.x' is not a version; write dotted numbers")) << m;
  m = error_of("/d/recipes/toolkits.toml", "[[driver_floor]]\ncuda = \"13.0\"\nlinux = \"580\"\nsource = \"\"\n");
  EXPECT_TRUE(has(m, "toolkits.toml:4: ") && has(m, "every fact carries its source")) << m;
  m = error_of("/d/recipes/toolkits.toml", "[[driver_floor]]\ncuda = \"13.0\"\nlinux = \"580\"\n");
  EXPECT_TRUE(has(m, "toolkits.toml:1: ") && has(m, "lacks 'source'")) << m;
}

TEST(KnowledgeSchema, AnArrayInTheWrongFileIsAnError) {
  // The [[gpu]] rows belong in gpus.toml: in torch-wheels.toml they are a typo of some kind.
  const std::string m =
      error_of("/d/recipes/torch-wheels.toml", "[[gpu]]\ncc = \"9.0\"\nnames = [\"H100\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "torch-wheels.toml:1: ") && has(m, "has no [[gpu]]") && has(m, "[[pypi_default]]")) << m;
}

// The release minors of a range (2.5 .. 2.7 -> 2.5, 2.6, 2.7); same major only.
std::vector<Version> releases(const Version& min, const Version& max) {
  std::vector<Version> out;
  for (int minor = min.minor(); min.major() == max.major() && minor <= max.minor(); ++minor)
    out.push_back(Version({min.major(), minor}));
  return out;
}

TEST(KnowledgeCrossCheck, EveryWheelArchListIsWhatItsNvccCanEmit) {
  const Knowledge& k = repo_knowledge();
  for (const WheelVariant& w : k.wheels) {
    const std::vector<Arch> accepted = k.nvcc_archs_for(w.cuda);
    for (const Arch& image : w.images) {
      // PTX (compute_XY) is emitted for the same targets nvcc accepts as SASS.
      Arch sass = image;
      sass.kind = ImageKind::sass;
      EXPECT_TRUE(std::ranges::find(accepted, sass) != accepted.end())
          << "[[wheel]] " << w.min.str() << "-" << w.max.str() << " " << w.variant << " " << w.platform << ": "
          << image.name() << " is not a target of nvcc " << w.cuda.str() << " (recipes/toolkits.toml [[nvcc_arch]])";
    }
  }
  for (const NgcRelease& release : k.ngc.releases) {
    const std::vector<Arch> accepted = k.nvcc_archs_for(release.cuda);
    for (const std::string& platform : release.platforms) {
      const NgcArchList* list = k.ngc.arch_list(release, platform);
      ASSERT_NE(list, nullptr) << release.tag << " " << platform;
      for (const Arch& image : list->images) {
        Arch sass = image;
        sass.kind = ImageKind::sass;
        EXPECT_TRUE(std::ranges::find(accepted, sass) != accepted.end())
            << "NGC " << release.tag << " (" << platform << ", CUDA " << release.cuda.str() << "): " << image.name()
            << " is not a target of that nvcc";
      }
    }
  }
}

// A JetPack wheel is built on its JetPack: its CUDA is that of each tracked
// L4T release it names, its arch list what that CUDA's nvcc emits, and one of
// its releases is tracked (so the doctor can tell which JetPack it fits).
TEST(KnowledgeCrossCheck, EveryJetPackWheelFitsItsL4tRelease) {
  const Knowledge& k = repo_knowledge();
  ASSERT_FALSE(k.jetpack_wheels.empty());
  for (const WheelVariant& w : k.jetpack_wheels) {
    int tracked = 0;
    for (const std::string& release : w.l4t) {
      const L4tRelease* row = k.l4t_release(*Version::parse(release));
      if (!row) continue;
      ++tracked;
      EXPECT_EQ(row->cuda, w.cuda) << w.torch << ": L4T R" << release << " ships CUDA " << row->cuda.str();
      EXPECT_EQ(row->jetpack.major(), Version::parse(w.jetpack)->major()) << w.torch << " on R" << release;
    }
    EXPECT_GT(tracked, 0) << w.torch << ": none of its L4T releases is a [[l4t]] row of recipes/drivers.toml";
    const std::vector<Arch> accepted = k.nvcc_archs_for(w.cuda);
    for (const Arch& image : w.images) {
      EXPECT_TRUE(std::ranges::find(accepted, image) != accepted.end()) << w.torch << ": " << image.name();
    }
    EXPECT_TRUE(w.url.starts_with("https://developer.download.nvidia.com/compute/redist/jp/v")) << w.url;
    EXPECT_TRUE(w.url.contains("-cp" + std::to_string(w.python->major()) + std::to_string(w.python->minor()) + "-"))
        << w.url << " is not a wheel for Python " << w.python->str();
  }
}

TEST(KnowledgeCrossCheck, EveryGpuHasAFirstToolkitAndADriverGeneration) {
  const Knowledge& k = repo_knowledge();
  for (const GpuProduct& gpu : k.gpus) {
    const auto window = k.nvcc_window_for(gpu.cc);
    EXPECT_TRUE(window.has_value()) << "[[gpu]] " << gpu.names.front() << " (" << gpu.cc.str()
                                    << "): no [[nvcc_arch]] row in recipes/toolkits.toml emits SASS for it";
    // Integrated (Tegra) parts get their driver with JetPack, not from a desktop branch (recipes/drivers.toml).
    if (gpu.tegra) continue;
    const GpuDriverSupport* generation = k.gpu_driver(gpu.cc);
    ASSERT_NE(generation, nullptr) << "[[gpu]] " << gpu.names.front() << " (" << gpu.cc.str()
                                   << "): no [[gpu_driver]] row in recipes/drivers.toml covers it";
    // The branch of the first driver that drives the GPU must be able to run
    // the first toolkit that targets it (by branch: the A100's first driver,
    // 450.36.06, is the CUDA 11.0 RC's; the 11.0 GA floor is 450.51.05).
    // Toolkits from 13.3 on have no Table 3 floor found yet (docs/knowledge.md,
    // 'What is not sourced'): Rubin's first nvcc is 13.4; its generation row
    // carries the branch NVIDIA names (R615).
    if (window && window->first && *window->first < Version({13, 3})) {
      const DriverFloor* floor = k.driver_floor(*window->first);
      ASSERT_NE(floor, nullptr) << gpu.names.front() << ": no [[driver_floor]] for CUDA " << window->first->str();
      EXPECT_LE(floor->linux.major(), generation->linux.major())
          << gpu.names.front() << ": its first driver " << generation->linux.str() << " ([[gpu_driver]] "
          << generation->generation << ") is of an older branch than CUDA " << window->first->str() << "'s floor "
          << floor->linux.str();
    }
  }
}

TEST(KnowledgeCrossCheck, EveryCudaOfAWheelOrContainerHasADriverFloor) {
  const Knowledge& k = repo_knowledge();
  for (const WheelVariant& w : k.wheels) {
    EXPECT_NE(k.driver_floor(w.cuda), nullptr) << "[[wheel]] " << w.variant << ": no [[driver_floor]] for CUDA "
                                               << w.cuda.str() << " in recipes/toolkits.toml";
    EXPECT_NE(k.minor_compat_for(w.cuda.major()), nullptr) << w.variant << ": no [[minor_compat]] for its major";
  }
  for (const NgcRelease& r : k.ngc.releases) {
    if (r.cuda < Version({13, 3})) {
      EXPECT_NE(k.driver_floor(r.cuda), nullptr) << "NGC " << r.tag;
    }
  }
  for (const DriverFloor& floor : k.driver_floors) {
    EXPECT_FALSE(floor.source.empty()) << floor.cuda.str();
    if (floor.windows) {
      EXPECT_EQ(floor.windows->major() / 10, floor.linux.major() / 10) << floor.cuda.str();
    }
  }
}

TEST(KnowledgeCrossCheck, EveryReleaseHasItsPythonRangeAndPypiDefault) {
  const Knowledge& k = repo_knowledge();
  for (const WheelVariant& w : k.wheels) {
    for (const Version& release : releases(w.min, w.max)) {
      EXPECT_NE(k.torch_python(release), nullptr)
          << "torch " << release.str() << " ([[wheel]] " << w.variant << "): no [[torch_python]] row";
      EXPECT_NE(k.pypi_default(release, w.platform), nullptr)
          << "torch " << release.str() << " on " << w.platform << ": no [[pypi_default]] row";
    }
  }
}

// Fails when two rows of the same key cover one value: the first match would
// silently win. `rows` gives (key, first, last) per row.
template <typename Row>
void expect_no_overlap(const std::vector<Row>& rows, const char* what,
                       const std::function<std::tuple<std::string, Version, Version>(const Row&)>& range) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      const auto [key_a, first_a, last_a] = range(rows[i]);
      const auto [key_b, first_b, last_b] = range(rows[j]);
      EXPECT_FALSE(key_a == key_b && first_a <= last_b && first_b <= last_a)
          << what << " rows " << i << " and " << j << " overlap: " << key_a << " " << first_a.str() << "-"
          << last_a.str() << " and " << first_b.str() << "-" << last_b.str();
    }
  }
}

TEST(KnowledgeCrossCheck, RowsOfOneKeyDoNotOverlap) {
  const Knowledge& k = repo_knowledge();
  expect_no_overlap<WheelVariant>(k.wheels, "[[wheel]]", [](const WheelVariant& w) {
    return std::tuple(w.variant + " " + w.platform, w.min, w.max);
  });
  expect_no_overlap<PypiDefault>(k.pypi_defaults, "[[pypi_default]]",
                                 [](const PypiDefault& p) { return std::tuple(p.platform, p.min, p.max); });
  expect_no_overlap<TorchPython>(k.torch_pythons, "[[torch_python]]",
                                 [](const TorchPython& p) { return std::tuple(std::string(), p.min, p.max); });
  expect_no_overlap<TritonPtxas>(k.triton, "[[triton]]",
                                 [](const TritonPtxas& t) { return std::tuple(std::string(), t.min, t.max); });
  expect_no_overlap<HostCompilerBounds>(k.host_compilers, "[[host_compiler]]", [](const HostCompilerBounds& h) {
    return std::tuple(std::string(), h.cuda_min, h.cuda_max);
  });
  expect_no_overlap<GpuDriverSupport>(k.gpu_drivers, "[[gpu_driver]]", [](const GpuDriverSupport& g) {
    return std::tuple(std::string(), Version({g.cc_min.major, g.cc_min.minor}),
                      Version({g.cc_max.major, g.cc_max.minor}));
  });
  expect_no_overlap<ExtensionWheel>(k.extension_wheels, "[[extension_wheel]]",
                                    [](const ExtensionWheel& e) { return std::tuple(e.distribution, e.min, e.max); });
  for (const std::string platform : {"x86_64", "arm64-sbsa", "igpu"}) {
    std::vector<NgcArchList> lists;
    for (const NgcArchList& l : k.ngc.arch_lists) {
      if (std::ranges::find(l.platforms, platform) != l.platforms.end()) lists.push_back(l);
    }
    expect_no_overlap<NgcArchList>(lists, "NGC [[arch_list]]",
                                   [&](const NgcArchList& l) { return std::tuple(platform, l.first, l.last); });
  }
}

// A project index page serves one torch major.minor (or one exact release
// where the page names it): a second row of the same distribution and torch
// would be shadowed by the first (Knowledge::project_page), and a page is a
// URL of its placeholders.
TEST(KnowledgeCrossCheck, EachProjectIndexHasOneRowPerTorch) {
  const Knowledge& k = repo_knowledge();
  std::set<std::string> seen;
  for (const ProjectIndexPage& row : k.project_index) {
    const std::string torch = row.exact() ? row.torch.str() : row.torch.major_minor();
    for (const std::string& d : row.distributions) {
      EXPECT_TRUE(seen.insert(d + " " + torch).second) << d << " has two [[project_index]] rows for torch " << torch;
    }
    const std::string python = row.pythons.empty() ? "" : row.pythons.front();
    for (const std::string& v : row.variants) {
      EXPECT_TRUE(row.url(v, python).starts_with("https://")) << row.page << " " << v;
      EXPECT_EQ(row.url(v, python).find('{'), std::string::npos) << row.page << " " << v;
    }
  }
  EXPECT_EQ(k.project_page("torch-scatter", Version({2, 8, 1}), "cu128"),
            "https://data.pyg.org/whl/torch-2.8.0+cu128.html");
  EXPECT_EQ(k.project_page("torch-scatter", Version({2, 8}), "cu999"), "");
  EXPECT_EQ(k.project_page("not-on-an-index", Version({2, 8}), "cu128"), "");
}

TEST(KnowledgeSchema, AProjectIndexPageWithoutItsPlaceholdersIsAnError) {
  const std::string m = error_of("/d/recipes/extensions.toml",
                                 "[[project_index]]\ndistributions = [\"torch-scatter\"]\n"
                                 "page = \"https://data.pyg.org/whl/torch-2.8.0.html\"\ntorch = \"2.8\"\n"
                                 "variants = [\"cu128\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(m, "extensions.toml:") && has(m, "{variant} and {torch}")) << m;
}

// Pages that name an exact torch release or the Python (pytorch3d's
// py39_cu113_pyt1110, kaolin's torch-2.8.0_cu128): the row's torch must be
// X.Y.Z, a page with {python_nodot} lists its Pythons, and such a page serves
// only that release (a fix installing "torch==2.8.*" has none).
TEST(KnowledgeSchema, AnExactReleasePageNeedsItsReleaseAndPythons) {
  const std::string page = "page = \"https://x.example/py{python_nodot}_{variant}_pyt{release_nodot}/download.html\"\n";
  const std::string head = "[[project_index]]\ndistributions = [\"pytorch3d\"]\n" + page;
  const std::string two_part = error_of("/d/recipes/extensions.toml", head +
                                                                          "torch = \"2.0\"\nvariants = [\"cu118\"]\n"
                                                                          "pythons = [\"3.10\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(two_part, "extensions.toml:") && has(two_part, "no X.Y.Z release")) << two_part;
  const std::string no_pythons =
      error_of("/d/recipes/extensions.toml", head + "torch = \"2.0.1\"\nvariants = [\"cu118\"]\nsource = \"s\"\n");
  EXPECT_TRUE(has(no_pythons, "pythons must be listed")) << no_pythons;
  const Knowledge& k = repo_knowledge();
  EXPECT_EQ(k.project_page("pytorch3d", Version({2, 0, 1}), "cu118", "3.10"),
            "https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/py310_cu118_pyt201/download.html");
  EXPECT_EQ(k.project_page("pytorch3d", Version({2, 0, 1}), "cu118", "3.11"), "");
  EXPECT_EQ(k.project_page("pytorch3d", Version({2, 0}), "cu118", "3.10"), "");
  EXPECT_EQ(k.project_page("kaolin", Version({2, 8, 0}), "cu128"),
            "https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.8.0_cu128.html");
  EXPECT_EQ(k.project_page("kaolin", Version({2, 8}), "cu128"), "");
  EXPECT_EQ(k.project_page("detectron2", Version({1, 10}), "cu113"),
            "https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.10/index.html");
  EXPECT_EQ(k.project_page("detectron2", Version({1, 11}), "cu113"), "");
}

// A project whose PyPI name holds no sdist of it is rebuilt from its
// repository at the release tag: an https git URL and a tag of {version}.
TEST(KnowledgeSchema, AProjectSourceIsAGitUrlWithATagFormat) {
  const std::string bad_url =
      error_of("/d/recipes/extensions.toml",
               "[[project_source]]\ndistribution = \"detectron2\"\nrepository = \"detectron2\"\n"
               "tag_format = \"v{version}\"\nsource = \"s\"\n");
  EXPECT_TRUE(has(bad_url, "extensions.toml:") && has(bad_url, "not an https git URL")) << bad_url;
  const Knowledge& k = repo_knowledge();
  ASSERT_NE(k.project_source("detectron2"), nullptr);
  EXPECT_EQ(k.project_source("detectron2")->tag("0.6+cu113"), "v0.6");
  ASSERT_NE(k.project_source("pytorch3d"), nullptr);
  EXPECT_EQ(k.project_source("pytorch3d")->tag("0.7.8"), "V0.7.8");
  EXPECT_EQ(k.project_source("pytorch3d")->tag("0.7.9"), "v0.7.9");
  EXPECT_EQ(k.project_source("torch-scatter"), nullptr);
}

// A release range that fails on a GPU range: both ranges inclusive, a
// missing max_cc open-ended, a .postN inside its release. The shipped rows'
// fixed release is past the range and, for a project that pins torch, has its
// [[extension_pin]] row: the fix moves torch with it.
TEST(KnowledgeSchema, ABrokenReleaseCoversItsReleasesOnItsGpus) {
  auto parsed =
      parse_knowledge({{"/d/recipes/extensions.toml",
                        "[[broken_release]]\ndistribution = \"p\"\nmin = \"1.1\"\nmax = \"1.3\"\n"
                        "min_cc = \"8.0\"\nmax_cc = \"8.9\"\nfixed = \"1.4\"\nwhat = \"w\"\nsource = \"s\"\n"}});
  ASSERT_TRUE(parsed) << parsed.error().message;
  const auto cc = [](std::string_view text) { return *ComputeCapability::parse(text); };
  EXPECT_NE(parsed->broken_release("p", *Version::parse("1.3.post2"), cc("8.6")), nullptr);
  EXPECT_NE(parsed->broken_release("p", Version({1, 1}), cc("8.0")), nullptr);
  EXPECT_EQ(parsed->broken_release("p", Version({1, 4}), cc("8.6")), nullptr);
  EXPECT_EQ(parsed->broken_release("p", Version({1, 2}), cc("9.0")), nullptr);
  EXPECT_EQ(parsed->broken_release("p", Version({1, 2}), cc("7.5")), nullptr);
  EXPECT_EQ(parsed->broken_release("q", Version({1, 2}), cc("8.6")), nullptr);
  const Knowledge& k = repo_knowledge();
  EXPECT_NE(k.broken_release("xformers", *Version::parse("0.0.32.post2"), cc("12.0")), nullptr);
  EXPECT_EQ(k.broken_release("xformers", *Version::parse("0.0.30"), cc("9.0")), nullptr);
  for (const BrokenRelease& row : k.broken_releases) {
    EXPECT_LT(row.max, row.fixed) << row.distribution;
    if (k.pins(row.distribution)) {
      EXPECT_NE(k.pin_of(row.distribution, row.fixed.str()), nullptr) << row.distribution;
    }
  }
}

// [[variant_index]]: a release's build for another CUDA on its project's own
// index; a row without its source is refused, a `+cuNNN` version finds its
// release's row, and every row of the repository's table names its source.
TEST(KnowledgeSchema, AVariantIndexRowNamesTheIndexOfOneReleaseAndItsSource) {
  const std::string row =
      "[[variant_index]]\ndistribution = \"p\"\nversion = \"1.2.0\"\nvariant = \"cu129\"\n"
      "index = \"https://example.org/1.2.0/cu129\"\n";
  EXPECT_FALSE(parse_knowledge({{"/d/recipes/extensions.toml", row}}));
  auto parsed = parse_knowledge({{"/d/recipes/extensions.toml", row + "source = \"s\"\n"}});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_NE(parsed->variant_index("p", "1.2.0+cu130", "cu129"), nullptr);
  EXPECT_EQ(parsed->variant_index("p", "1.2.0", "cu130"), nullptr);
  EXPECT_EQ(parsed->variant_index("p", "1.2.1", "cu129"), nullptr);
  const Knowledge& k = repo_knowledge();
  ASSERT_FALSE(k.variant_indexes.empty());
  for (const VariantIndex& v : k.variant_indexes) {
    EXPECT_FALSE(v.source.empty()) << v.distribution << " " << v.version;
    EXPECT_TRUE(v.index.starts_with("https://")) << v.index;
    EXPECT_NE(v.index.find(v.version), std::string::npos) << v.index;
    EXPECT_TRUE(v.index.ends_with("/" + v.variant)) << v.index;
  }
  EXPECT_NE(k.variant_index("vllm", "0.22.0", "cu129"), nullptr);
}

// Every release of sgl-kernel has the torch it was built against, with the
// sglang release(s) whose Requires-Dist pairs them; a `+cuNNN` build of a
// release is that release's row.
TEST(KnowledgeSchema, EverySglKernelBuiltAgainstRowNamesItsSource) {
  const Knowledge& k = repo_knowledge();
  int rows = 0;
  for (const ExtensionPin& e : k.extension_pins) {
    if (e.distribution != "sgl-kernel") continue;
    ++rows;
    EXPECT_TRUE(e.built_against) << e.version;
    EXPECT_FALSE(e.source.empty()) << e.version;
  }
  EXPECT_GE(rows, 20);
  const ExtensionPin* row = k.built_against_row("sgl-kernel", "0.3.21+cu130");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->torch, *Version::parse("2.9.1"));
  EXPECT_EQ(k.built_against_row("xformers", "0.0.30"), nullptr);  // a METADATA pin, not a build's torch
}

TEST(KnowledgeCrossCheck, EveryRowAnywhereCarriesItsSource) {
  const Knowledge& k = repo_knowledge();
  const auto check = [](const auto& rows, const char* what) {
    for (const auto& row : rows) EXPECT_FALSE(row.source.empty()) << what;
  };
  check(k.gpus, "[[gpu]]");
  check(k.driver_floors, "[[driver_floor]]");
  check(k.minor_compat, "[[minor_compat]]");
  check(k.nvcc_archs, "[[nvcc_arch]]");
  check(k.host_compilers, "[[host_compiler]]");
  check(k.compiler_packages, "[[compiler_package]]");
  check(k.driver_packages, "[[driver_package]]");
  check(k.wheels, "[[wheel]]");
  check(k.jetpack_wheels, "[[jetpack_wheel]]");
  check(k.extensions, "[[extension]]");
  check(k.gpu_drivers, "[[gpu_driver]]");
  check(k.pypi_defaults, "[[pypi_default]]");
  check(k.torch_pythons, "[[torch_python]]");
  check(k.extension_pins, "[[extension_pin]]");
  check(k.triton, "[[triton]]");
  check(k.torch_tritons, "[[torch_triton]]");
  check(k.extension_wheels, "[[extension_wheel]]");
  check(k.project_index, "[[project_index]]");
  check(k.project_sources, "[[project_source]]");
  check(k.broken_releases, "[[broken_release]]");
  check(k.variant_indexes, "[[variant_index]]");
  check(k.ngc.releases, "NGC [[release]]");
  check(k.ngc.arch_lists, "NGC [[arch_list]]");
  check(k.ngc.first_tags, "NGC [[first_tag]]");
  check(k.ngc.forward_compat, "NGC [[forward_compat]]");
  for (const Recipe& r : k.build_recipes) {
    EXPECT_FALSE(r.source.empty()) << r.file;
    EXPECT_FALSE(r.memory_source.empty()) << r.file;
    check(r.env, r.file.c_str());
    check(r.front_ends, r.file.c_str());
  }
}

}  // namespace
}  // namespace torchfix
