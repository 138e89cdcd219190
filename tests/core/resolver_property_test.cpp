// Property: on a generated matrix (GPU generations Kepler..GB10 and Thor x
// drivers R384..R590 x torch wheels of the tables x platforms), whenever the
// doctor calls a machine broken, its first fix, applied to the snapshot,
// diagnoses clean, or the doctor says plainly that no fix exists and why.
//
// Bounded: every (platform, GPU, driver) cell is swept, each with every
// k_stride-th torch of its platform at a rotating offset, so every torch meets
// every GPU generation and driver branch across the cells while one run stays
// at a few seconds in a Debug build.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/resolver/resolver.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return testing::repo_knowledge();
}

struct DriverPoint {
  const char* version;
  const char* cuda;  // what nvidia-smi reports for it
};

// One driver per branch that changes an answer, from R384 to R590 (Linux
// numbering; the Windows column of a branch is close enough for the property).
constexpr DriverPoint k_drivers[] = {
    {"384.81", "9.0"},     {"450.80.02", "11.0"},  {"470.82.01", "11.4"}, {"525.60.13", "12.0"}, {"535.104.05", "12.2"},
    {"560.35.03", "12.6"}, {"570.133.20", "12.8"}, {"580.95.05", "13.0"}, {"590.44.01", "13.1"},
};

constexpr const char* k_gpus[] = {"3.5", "3.7", "5.2", "6.0",  "6.1",  "7.0",  "7.5",  "8.0", "8.6",
                                  "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"};

struct PlatformPoint {
  const char* machine;
  const char* os;
  bool wsl2;
  const char* wheels;  // wheel table platform
};

constexpr PlatformPoint k_platforms[] = {{"x86_64", "Ubuntu 24.04", false, "x86_64"},
                                         {"aarch64", "Ubuntu 24.04", false, "aarch64"},
                                         {"x86_64", "Ubuntu 24.04", true, "x86_64"},
                                         {"windows", "Windows 11", false, "windows"}};

Snapshot machine(const PlatformPoint& p, ComputeCapability cc, const DriverPoint& d, const std::string& torch,
                 const std::optional<std::string>& cuda, const std::vector<Arch>& flags) {
  Snapshot s;
  s.platform.machine = p.machine;
  s.platform.os = p.os;
  s.platform.wsl2 = p.wsl2;
  s.platform.libcuda_loadable = true;
  s.platform.nvidia_device_nodes = !p.wsl2;
  s.driver.version = Version::parse(d.version);
  s.driver.cuda_version = Version::parse(d.cuda);
  s.driver.source = "matrix";
  s.gpus.push_back({0, "", cc, std::nullopt, "matrix"});
  PythonEnv env;
  env.interpreter = "python3";
  env.python_version = "3.12.3";
  TorchBuild t;
  t.version = torch;
  t.cuda = cuda;
  t.arch_flags = flags;
  t.location = "(matrix)";
  env.torch = t;
  env.distributions["torch"] = torch;
  s.pythons.push_back(env);
  return s;
}

bool clean_for(const Diagnosis& d, const std::string& interpreter) {
  for (const Finding& f : d.findings) {
    if (f.severity == Severity::problem && (f.python.empty() || f.python == interpreter)) return false;
  }
  return true;
}

constexpr std::size_t k_stride = 7;

TEST(ResolverProperty, FirstFixAppliedDiagnosesCleanOrNoFixIsSaidPlainly) {
  const Knowledge& k = knowledge();
  const auto start = std::chrono::steady_clock::now();
  std::size_t cell = 0;
  int matrix = 0;
  int machines = 0;
  int broken = 0;
  int fixed = 0;
  int no_fix = 0;
  for (const PlatformPoint& p : k_platforms) {
    // Every wheel row of the platform at its newest release, plus a CPU build.
    std::vector<std::tuple<std::string, std::optional<std::string>, std::vector<Arch>>> torches;
    for (const WheelVariant& w : k.wheels) {
      if (w.platform == p.wheels) torches.emplace_back(w.max.str() + ".0+" + w.variant, w.cuda.major_minor(), w.images);
    }
    torches.emplace_back("2.9.1+cpu", std::nullopt, std::vector<Arch>{});
    for (const char* gpu : k_gpus) {
      const ComputeCapability cc = ComputeCapability::parse(gpu).value();
      if (is_tegra(cc) && std::string(p.machine) != "aarch64") continue;  // Jetson parts are aarch64
      for (const DriverPoint& d : k_drivers) {
        matrix += static_cast<int>(torches.size());
        ++cell;
        for (std::size_t t = cell % k_stride; t < torches.size(); t += k_stride) {
          const auto& [version, cuda, flags] = torches[t];
          const Snapshot s = machine(p, cc, d, version, cuda, flags);
          ++machines;
          const Diagnosis diagnosis = diagnose(s, k);
          if (diagnosis.exit_code() == 0) continue;
          ++broken;
          const std::string where = std::string(p.machine) + (p.wsl2 ? "/wsl2" : "") + " gpu " + gpu + " driver " +
                                    d.version + " torch " + version;
          ASSERT_FALSE(diagnosis.remedies.empty()) << where;
          const RemedyReport& r = diagnosis.remedies.front();
          if (r.resolution.winners.empty()) {
            ++no_fix;
            if (std::getenv("TORCHFIX_PROPERTY_VERBOSE"))
              std::printf("no fix: %s: %s\n", where.c_str(), r.resolution.no_fix->c_str());
            ASSERT_TRUE(r.resolution.no_fix.has_value()) << where;
            EXPECT_FALSE(r.resolution.no_fix->empty()) << where;
            EXPECT_TRUE(r.fixes.front().summary.starts_with("No fix")) << where;
            continue;
          }
          const Diagnosis again = diagnose(apply_remedy(s, r.python, r.resolution.winners.front(), k), k);
          EXPECT_TRUE(clean_for(again, "python3")) << where << ": first fix " << r.fixes.front().summary;
          if (clean_for(again, "python3")) ++fixed;
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "resolver property: matrix of %d machines (4 platforms x %zu GPUs x %zu drivers x torch wheels); %d "
      "diagnosed (every %zu-th torch per cell), %d broken, %d fixed by their first fix, %d with no fix (said why); "
      "%.2f s\n",
      matrix, std::size(k_gpus), std::size(k_drivers), machines, k_stride, broken, fixed, no_fix, seconds);
  EXPECT_GT(broken, 0);
  EXPECT_GT(fixed, 0);
}

}  // namespace
}  // namespace torchfix
