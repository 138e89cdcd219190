// `torchfix doctor` as a user runs it: the real binary in a real process,
// its exit codes, its JSON, and one clear line for each kind of bad input.

#include <gtest/gtest.h>

#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../build/test_support.hpp"
#include "../support/child.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

ProcessResult doctor(std::vector<std::string> args, Environment env = {}) {
  env.emplace("PATH", "/usr/local/cuda/bin:/usr/bin:/bin");
  env.emplace("LANG", "C.UTF-8");  // UTF-8 marks ([✓]); without a UTF-8 locale they are ASCII ([ok])
  SystemProcessRunner runner;
  args.insert(args.begin(), "doctor");
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

int lines(const std::string& text) {
  return static_cast<int>(std::ranges::count(text, '\n'));
}

TEST(DoctorCli, ProblemGivesExitOneAndTheFix) {
  auto r = doctor({"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[✗] torch 2.6.0+cu126 cannot run on GPU 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--index-url https://download.pytorch.org/whl/cu128"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "colour codes in piped output";
}

TEST(DoctorCli, HealthyMachineGivesExitZero) {
  auto r = doctor({"--snapshot", k_fixtures + "h200-torch211-cu130.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 0: NVIDIA H200 (compute capability 9.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA driver 580.159.04, supports CUDA 13.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch 2.11.0+cu130 runs on GPU 0"), std::string::npos) << r.out;
}

TEST(DoctorCli, JsonHoldsSummaryFindingsAndSnapshot) {
  auto r = doctor({"--snapshot", k_fixtures + "F6-b200-causal-conv1d.json", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["summary"]["exit_code"], 1);
  EXPECT_GE(json["summary"]["problems"].get<int>(), 1);
  bool found = false;
  for (const auto& f : json["findings"]) {
    if (f["id"] == "package.arch" && f["package"] == "causal-conv1d") {
      found = true;
      EXPECT_EQ(f["severity"], "problem");
      EXPECT_EQ(f["reach"], "none");
      EXPECT_EQ(f["gpu"], 0);
      EXPECT_FALSE(f["fixes"].empty());
    }
  }
  EXPECT_TRUE(found) << r.out;
  EXPECT_EQ(json["snapshot"]["gpus"][0]["compute_capability"], "10.0");
}

TEST(DoctorCli, SavedSnapshotReplaysToTheSameFindings) {
  TempDir dir;
  const auto saved = (dir / "s.json").string();
  auto first =
      doctor({"--snapshot", k_fixtures + "F2-gtx1080ti-torch28-cu128.json", "--save-snapshot", saved, "--json"});
  auto second = doctor({"--snapshot", saved, "--json"});
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(first.out)["findings"], nlohmann::json::parse(second.out)["findings"]);
}

TEST(DoctorCli, WhatIfNewGpuOldTorch) {
  TempDir dir;
  write_file(dir / "empty.json", R"({"schema_version": 1})");
  auto r = doctor({"--snapshot", (dir / "empty.json").string(), "--gpu", "RTX 5070 Ti", "--torch", "2.6.0+cu124"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("what-if"), std::string::npos);
  EXPECT_NE(r.out.find("RTX 5070 Ti, 12.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("whl/cu128"), std::string::npos) << r.out;
}

// Every `torchfix build` line the doctor prints on the field fixtures is one
// that build accepts for that snapshot: no recipe refusing the arch (vllm has
// no kernels for 6.1), no unknown recipe. The only failures allowed are
// the ones the fix names first: the toolkit it says to install, a host
// compiler the chosen nvcc accepts.
TEST(DoctorCli, EveryPrintedBuildCommandIsOneBuildAccepts) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(k_fixtures)) {
    const std::string fixture = entry.path().string();
    const ProcessResult d = doctor({"--snapshot", fixture});
    std::istringstream out(d.out);
    for (std::string line; std::getline(out, line);) {
      const auto at = line.find("$ torchfix build ");
      if (at == std::string::npos) continue;
      std::vector<std::string> args;
      std::istringstream words(line.substr(at + 11));
      for (std::string w; words >> w;) args.push_back(w[0] == '\'' ? w.substr(1, w.size() - 2) : w);
      args.insert(args.end(), {"--dry-run", "--snapshot", fixture});
      SystemProcessRunner runner;
      Environment env;
      env.emplace("PATH", "/usr/bin:/bin");
      auto b = runner.run(Command{TORCHFIX_BINARY, args, env, {}, std::chrono::seconds(60)});
      ASSERT_TRUE(b);
      ++checked;
      if (b->exit_code == 0) continue;
      // A missing toolkit is named by the fix's "with CUDA ..."; any other
      // refusal (a missing host compiler) must be named in the fix's text.
      const std::string head = b->err.substr(0, b->err.find(':', std::string("torchfix build: ").size()));
      const std::string reason = head.substr(std::min(head.size(), std::string("torchfix build: ").size()));
      const bool toolkit = reason.starts_with("no installed CUDA toolkit can build");
      EXPECT_TRUE(toolkit || (!reason.empty() && d.out.find(reason) != std::string::npos))
          << entry.path().filename() << ": " << line << "\n"
          << b->err;
    }
  }
  EXPECT_GE(checked, 4) << "the fixtures F6, F7 and F16 print torchfix build lines";
}

// The NGC container is one of the resolver's winners (issue 11): in --json
// beside the wheel fix with its run line and host driver; none on R560.
TEST(DoctorCli, JsonOffersTheNgcContainerBesideTheWheelFix) {
  TempDir dir;
  write_file(dir / "empty.json", R"({"schema_version": 1})");
  const std::vector<std::string> base = {
      "--snapshot", (dir / "empty.json").string(), "--gpu", "RTX 5070 Ti", "--torch", "2.6.0+cu124", "--json",
      "--driver"};
  auto with = [&](const std::string& driver) {
    auto args = base;
    args.push_back(driver);
    auto r = doctor(args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    return nlohmann::json::parse(r.out)["remedies"];
  };
  const auto r575 = with("575.51.03");
  ASSERT_EQ(r575.size(), 1u) << r575.dump(2);
  const auto& winners = r575[0]["winners"];
  ASSERT_GE(winners.size(), 2u) << winners.dump(2);
  EXPECT_EQ(winners[0]["kind"], "wheel");
  const auto image = std::ranges::find_if(winners, [](const auto& w) { return w["kind"] == "container"; });
  ASSERT_NE(image, winners.end()) << winners.dump(2);
  EXPECT_EQ((*image)["container"]["image"], "nvcr.io/nvidia/pytorch:25.06-py3");
  EXPECT_EQ((*image)["container"]["driver_needed"], "575.51.03");
  EXPECT_EQ((*image)["fix"]["commands"][0],
            "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm "
            "nvcr.io/nvidia/pytorch:25.06-py3");
  EXPECT_TRUE((*image)["verified"].get<bool>());
  EXPECT_TRUE((*image)["warnings_after"].is_array()) << image->dump(2);
  const auto r560 = with("560.35.03");
  ASSERT_EQ(r560.size(), 1u);
  for (const auto& w : r560[0]["winners"]) EXPECT_NE(w["kind"], "container") << w.dump(2);
  bool said = false;
  for (const auto& lost : r560[0]["rejected"]) {
    if (lost["candidate"] == "an NGC PyTorch container") {
      said = lost["reasons"][0].get<std::string>().find("(R570) or newer") != std::string::npos;
    }
  }
  EXPECT_TRUE(said) << r560[0]["rejected"].dump(2);
}

TEST(DoctorCli, BadInputsFailWithOneLineAndExitTwo) {
  TempDir dir;
  write_file(dir / "bad.json", "{ not json");
  write_file(dir / "wrong.json", R"({"schema_version": 1, "gpus": [{"compute_capability": "twelve"}]})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--snapshot", (dir / "bad.json").string()}, "not valid JSON"},
      {{"--snapshot", (dir / "wrong.json").string()}, "compute_capability"},
      {{"--snapshot", (dir / "missing.json").string()}, "missing.json"},
      {{"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--gpu", "RTX 9999 Hyper"}, "RTX 9999 Hyper"},
      {{"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--torch", "2.6.0+cuda"}, "cuda"},
      {{"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--gpu", "sm_999"}, "sm_999"},
      {{"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--driver", "latest"}, "latest"},
  };
  for (const auto& [args, needle] : cases) {
    auto r = doctor(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_LE(lines(r.err), 2) << r.err;
  }
}

TEST(DoctorCli, UnreadableTableFailsWithFileAndLine) {
  TempDir dir;
  std::filesystem::create_directories(dir / "recipes");
  // Every table and the build recipes but gpus.toml.
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TORCHFIX_SOURCE_DIR) + "/recipes")) {
    if (entry.path().filename() == "gpus.toml") continue;
    std::filesystem::copy(entry.path(), dir / "recipes" / entry.path().filename(),
                          std::filesystem::copy_options::recursive);
  }
  write_file(dir / "recipes/gpus.toml", "[[gpu]]\ncc = \"9.0\"\nnames = [\"H100\"]\n\n[[gpu]]\ncc = 9.0\n");
  auto r = doctor({"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json"},
                  {{"TORCHFIX_DATA_DIR", dir.path().string()}});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("gpus.toml:1"), std::string::npos) << r.err;  // first row has no source
  std::filesystem::remove(dir / "recipes/gpus.toml");
  r = doctor({"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json"},
             {{"TORCHFIX_DATA_DIR", dir.path().string()}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gpus.toml"), std::string::npos) << r.err;
}

TEST(DoctorCli, LogCarriesArgvAndEnvironmentWithoutSecrets) {
  TempDir dir;
  const auto log = (dir / "log.json").string();
  auto r = doctor({"--snapshot", k_fixtures + "F3-p100-torch28-cu128.json", "--log", log},
                  {{"HF_TOKEN", "hf_secret123"}, {"CUDA_HOME", "/usr/local/cuda-12.8"}});
  EXPECT_EQ(r.exit_code, 1);
  auto json = nlohmann::json::parse(testing::read_file(log));
  EXPECT_EQ(json["argv"][1], "doctor");
  EXPECT_EQ(json["environment"]["CUDA_HOME"], "/usr/local/cuda-12.8");
  EXPECT_EQ(json["environment"]["HF_TOKEN"], "<redacted>");
  EXPECT_EQ(testing::read_file(log).find("hf_secret123"), std::string::npos);
  EXPECT_FALSE(json["findings"].empty());
}

TEST(DoctorCli, LogAndSnapshotNeverFollowAPlantedLink) {
  TORCHFIX_LINUX_ONLY("checks POSIX file modes or symbolic links");
  // The attack from issue 9: as root, links planted at F.tmp (the old
  // temporary name) and at F itself must not make torchfix write the victim.
  TempDir dir;
  const auto victim = dir / "victim";
  write_file(victim, "precious\n");
  for (const std::string option : {"--log", "--save-snapshot"}) {
    const auto target = dir / ("out" + option + ".json");
    std::filesystem::create_symlink(victim, target.string() + ".tmp");
    auto r = doctor({"--snapshot", k_fixtures + "F3-p100-torch28-cu128.json", option, target.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(testing::read_file(victim), "precious\n") << option << " wrote through " << target << ".tmp";
    EXPECT_TRUE(std::filesystem::is_symlink(target.string() + ".tmp"));
    EXPECT_FALSE(nlohmann::json::parse(testing::read_file(target)).empty());

    // A link of the user's own at the target itself is the user's way to
    // put the file elsewhere: it is written at its target and kept (issue
    // 20; a link planted by another user is refused: hostile_cli_test.cpp).
    std::filesystem::remove(target);
    const auto elsewhere = dir / ("elsewhere" + option + ".json");
    std::filesystem::create_symlink(elsewhere, target);
    r = doctor({"--snapshot", k_fixtures + "F3-p100-torch28-cu128.json", option, target.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(testing::read_file(victim), "precious\n");
    EXPECT_TRUE(std::filesystem::is_symlink(target));
    EXPECT_FALSE(nlohmann::json::parse(testing::read_file(elsewhere)).empty());
  }
}

TEST(DoctorCli, LogIsReadableByItsOwnerOnly) {
  TORCHFIX_LINUX_ONLY("checks POSIX file modes or symbolic links");
  TempDir dir;
  const auto log = dir / "log.json";
  write_file(log, "old\n");
  std::filesystem::permissions(log, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto r = doctor({"--snapshot", k_fixtures + "F3-p100-torch28-cu128.json", "--log", log.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto mode = std::filesystem::status(log).permissions() & std::filesystem::perms::all;
  EXPECT_EQ(mode, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  // No temporary file is left beside it.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(DoctorCli, ProbesThisMachine) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  // The real probes on whatever machine runs the tests: never a tool failure.
  auto r = doctor({"--json"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  auto json = nlohmann::json::parse(r.out);
  const auto& snapshot = json["snapshot"];
  if (std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
    ASSERT_FALSE(snapshot["toolkits"].empty());
    EXPECT_EQ(snapshot["toolkits"][0]["archs_source"], "nvcc --list-gpu-code");
  }
  if (std::filesystem::exists("/usr/bin/g++")) {
    EXPECT_FALSE(snapshot["compilers"].empty());
  }
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    EXPECT_TRUE(snapshot["gpus"].empty());
  }
}

#ifndef _WIN32
// Starts torchfix with `args` and `env` (SIGINT at its default action, as
// from a terminal, output discarded); returns its pid.
pid_t start_torchfix(const std::vector<std::string>& args, const Environment& env) {
  std::vector<std::string> argv = {TORCHFIX_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::start(argv, env);
}

// Waits up to `limit` for `pid`; returns its wait status, or -1 (then kills it).
int wait_for(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    ::usleep(20'000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

bool still_running(int pid) {
  const std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto state = stat.rfind(") ");
  return state != std::string::npos && stat[state + 2] != 'Z';
}

int pid_from(const std::filesystem::path& file) {
  for (int i = 0; i < 1000; ++i) {
    const std::string text = testing::read_file(file);
    if (!text.empty() && text.back() == '\n') return std::stoi(text);
    ::usleep(20'000);
  }
  return 0;
}

TEST(DoctorCli, SetsidGrandchildOfAProbeDoesNotHangTheDoctor) {
  TORCHFIX_LINUX_ONLY("a /bin/sh nvcc and nvidia-smi, fork, SIGINT and /proc");
  // `printf '#!/bin/sh\nsetsid sleep 1000 &\n' > nvidia-smi` first on PATH
  // (and the same nvcc) hung the doctor forever.
  TempDir dir;
  for (const char* tool : {"nvidia-smi", "nvcc"}) {
    write_file(dir / "bin" / tool, "#!/bin/sh\nsetsid sleep 1000 &\n");
    testing::make_executable(dir / "bin" / tool);
  }
  const Environment env{{"PATH", (dir / "bin").string() + ":/usr/bin:/bin"}};
  const pid_t pid = start_torchfix({"doctor", "--no-binaries"}, env);
  const int status = wait_for(pid, std::chrono::seconds(30));
  ASSERT_NE(status, -1) << "torchfix doctor did not finish in 30 s";
  EXPECT_TRUE(WIFEXITED(status));
}

TEST(DoctorCli, CtrlCDuringProbesLeavesNoChildBehind) {
  TORCHFIX_LINUX_ONLY("a /bin/sh nvcc and nvidia-smi, fork, SIGINT and /proc");
  TempDir dir;
  const auto probe_pid = dir / "nvcc.pid";
  const auto sleeper_pid = dir / "sleeper.pid";
  write_file(dir / "bin/nvcc", "#!/bin/sh\necho $$ > " + probe_pid.string() + "\nsetsid sh -c 'echo $$ > " +
                                   sleeper_pid.string() + "; exec sleep 1000' &\nsleep 1000\n");
  testing::make_executable(dir / "bin/nvcc");
  const Environment env{{"PATH", (dir / "bin").string() + ":/usr/bin:/bin"}};
  const pid_t pid = start_torchfix({"doctor", "--no-binaries", "--timeout", "60"}, env);
  const int probe = pid_from(probe_pid);
  const int sleeper = pid_from(sleeper_pid);
  ASSERT_GT(probe, 0);
  ASSERT_GT(sleeper, 0);
  ::kill(pid, SIGINT);
  const int status = wait_for(pid, std::chrono::seconds(20));
  ASSERT_NE(status, -1) << "torchfix did not stop on Ctrl-C";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  for (int i = 0; i < 100 && (still_running(probe) || still_running(sleeper)); ++i) ::usleep(50'000);
  EXPECT_FALSE(still_running(probe)) << "the probe " << probe << " was left running";
  EXPECT_FALSE(still_running(sleeper)) << "the probe's setsid grandchild " << sleeper << " was left running";
}
#endif

bool has_text(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(DoctorCli, SummaryEndsWithTheFixToRunFirst) {
  // A torch problem beside toolkit warnings: the torch fix comes first.
  auto r = doctor(
      {"--snapshot", k_fixtures + "F10-rtx4090-gcc14-nvcc125.json", "--gpu", "GTX 1080 Ti", "--torch", "2.8.0+cu128"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto run_first = r.out.find("\nRun first: ");
  ASSERT_NE(run_first, std::string::npos) << r.out;
  EXPECT_TRUE(has_text(r.out.substr(run_first), "pip install --force-reinstall torch==2.8.0")) << r.out;
  EXPECT_TRUE(has_text(r.out.substr(run_first), "why first: torch's wheel brings its own CUDA libraries")) << r.out;
  // A driver problem beside a torch one: the driver first.
  r = doctor(
      {"--snapshot", k_fixtures + "F10-rtx4090-gcc14-nvcc125.json", "--gpu", "RTX 5090", "--torch", "2.6.0+cu124"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  run_first = r.out.find("\nRun first: ");
  ASSERT_NE(run_first, std::string::npos) << r.out;
  EXPECT_TRUE(has_text(r.out.substr(run_first), "why first: nothing CUDA runs until the GPU and its driver do"))
      << r.out;
}

TEST(DoctorCli, MarkdownIsShortRedactedAndNamesTheFix) {
  Environment env = {{"HOME", "/home/alice"}};
  auto r = doctor({"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--markdown"}, env);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.starts_with("### torchfix doctor: 1 problem")) << r.out;
  EXPECT_TRUE(has_text(r.out, "| GPUs | GPU 0 (NVIDIA GeForce RTX 5090 D, 12.0) |")) << r.out;
  EXPECT_TRUE(has_text(r.out, "- [✗] ")) << r.out;
  EXPECT_TRUE(has_text(r.out, "Run first: `")) << r.out;
  EXPECT_FALSE(has_text(r.out, "/home/alice")) << r.out;
  EXPECT_LT(std::ranges::count(r.out, '\n'), 60) << r.out;

  // The facts are the Situation's: a what-if driver shows the CUDA the tables
  // give it, identical GPUs are one cell.
  r = doctor({"--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--markdown", "--driver", "570.124.04",
              "--gpu", "NVIDIA B200", "--gpu", "NVIDIA B200"},
             env);
  EXPECT_TRUE(has_text(r.out, "| driver | driver 570.124.04 (R570) (CUDA 12.8) |")) << r.out;
  EXPECT_TRUE(has_text(r.out, "| GPUs | GPUs 0-1 (2x NVIDIA B200, 10.0) |")) << r.out;
  EXPECT_TRUE(has_text(r.out, "| platform | linux-x86_64 (")) << r.out;
}

}  // namespace
}  // namespace torchfix
