// Runs the real torchfix binary: `torchfix arch` and `torchfix env` on
// snapshot fixtures (tests/fixtures/snapshots/env-*.json), sourcing the
// printed snippet in a real shell and installing it into a real rc file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/linux_only.hpp"
#include "probe/process.hpp"
#include "shellenv/rc_edit.hpp"
#include "shellenv/rc_file.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name;
}

ProcessResult run(const std::string& program, std::vector<std::string> args, const Environment& env = {}) {
  SystemProcessRunner runner;
  Command command;
  command.program = program;
  command.args = std::move(args);
  Environment full = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent-home"}, {"LANG", "C.UTF-8"}};
  for (const auto& [k, v] : env) full[k] = v;
  command.env = full;
  command.timeout = std::chrono::seconds(60);
  auto result = runner.run(command);
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? *result : ProcessResult{};
}

ProcessResult torchfix(std::vector<std::string> args, const Environment& env = {}) {
  EXPECT_TRUE(fs::exists(TORCHFIX_BINARY)) << TORCHFIX_BINARY << " is missing: build the torchfix target too";
  return run(TORCHFIX_BINARY, std::move(args), env);
}

TEST(ArchCli, MixedGpusInEveryFormat) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"torch", "8.6;12.0+PTX\n"},
      {"cmake", "86-real;120\n"},
      {"gencode",
       "-gencode arch=compute_86,code=sm_86 -gencode arch=compute_120,code=sm_120 "
       "-gencode arch=compute_120,code=compute_120\n"},
      {"flash-attn", "86;120\n"},
  };
  for (const auto& [format, out] : expected) {
    auto r = torchfix({"arch", "--snapshot", fixture("env-mixed-a6000-5090.json"), "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, out) << format;
  }
  auto none = torchfix({"arch", "--snapshot", fixture("env-mixed-a6000-5090.json"), "--ptx", "none"});
  EXPECT_EQ(none.out, "8.6;12.0\n");
}

TEST(ArchCli, GpuOptionTakesNamesSmAndDottedForms) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix({"arch", "--gpu", "RTX 5090", "--gpu", "sm_86", "--gpu", "12.1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "8.6;12.0;12.1+PTX\n");
  // --gpu replaces the snapshot's GPUs (what-if).
  auto what_if = torchfix({"arch", "--snapshot", fixture("env-mixed-a6000-5090.json"), "--gpu", "H100"});
  EXPECT_EQ(what_if.out, "9.0+PTX\n");
  auto unknown = torchfix({"arch", "--gpu", "Voodoo 5 6000"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("Voodoo"), std::string::npos) << unknown.err;
}

TEST(ArchCli, NoGpuSaysSoAndExitsTwo) {
  auto r = torchfix({"arch", "--snapshot", fixture("env-no-gpu.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no NVIDIA GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  auto bad = torchfix({"arch", "--gpu", "8.6", "--format", "bazel"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(EnvCli, SnippetSourcedInBashSetsTheVariables) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  auto r = torchfix({"env", "--shell", "bash", "--snapshot", fixture("env-mixed-a6000-5090.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every variable line follows a one-line comment.
  std::istringstream lines(r.out);
  std::string previous, line;
  while (std::getline(lines, line)) {
    if (line.starts_with("export ") || line.starts_with("case ")) {
      EXPECT_TRUE(previous.starts_with("# ")) << line;
    }
    previous = line;
  }
  const std::string script =
      r.out + "\nprintf '%s|%s|%s|%s|%s' \"$CUDA_HOME\" \"$PATH\" \"$TORCH_CUDA_ARCH_LIST\" \"$CUDAHOSTCXX\" \"$CC\"";
  auto sourced = run("/bin/bash", {"--norc", "-c", script});
  ASSERT_EQ(sourced.exit_code, 0) << sourced.err << r.out;
  EXPECT_EQ(sourced.out,
            "/opt/My CUDA's $dir/12.8|/opt/My CUDA's "
            "$dir/12.8/bin:/usr/bin:/bin|8.6;12.0+PTX|/usr/bin/g++-13|/usr/bin/gcc-13")
      << r.out;
}

// SHELL is unset in containers and on CI runners; the shell that started
// torchfix then decides, and anything else is one line and exit 2.
TEST(EnvCli, WithoutShellVariableTheParentShellDecides) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  const std::string snapshot = fixture("env-mixed-a6000-5090.json");
  const std::string call = std::string("'") + TORCHFIX_BINARY + "' env --snapshot '" + snapshot + "'; true";
  auto bash = run("/bin/bash", {"--norc", "-c", call});
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  EXPECT_NE(bash.out.find("\nexport TORCH_CUDA_ARCH_LIST="), std::string::npos) << bash.out;
  if (fs::exists("/usr/bin/fish")) {
    auto fish = run("/usr/bin/fish", {"--no-config", "-c", call});
    ASSERT_EQ(fish.exit_code, 0) << fish.err;
    EXPECT_NE(fish.out.find("\nset -gx -- TORCH_CUDA_ARCH_LIST "), std::string::npos) << fish.out;
  }
  auto direct = torchfix({"env", "--snapshot", snapshot});
  EXPECT_EQ(direct.exit_code, 2);
  EXPECT_EQ(direct.out, "");
  EXPECT_NE(direct.err.find("cannot tell your shell from SHELL='' or the parent process"), std::string::npos)
      << direct.err;
  EXPECT_NE(direct.err.find("pass --shell bash, zsh or fish"), std::string::npos) << direct.err;
}

// The Windows shells: the same variables, each line after a comment, in
// PowerShell's $env: form and cmd's set form; cmd has no profile to install into.
TEST(EnvCli, PowerShellAndCmdSnippetsSetTheSameVariables) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const std::string snapshot = fixture("env-mixed-a6000-5090.json");
  auto ps = torchfix({"env", "--shell", "powershell", "--snapshot", snapshot});
  ASSERT_EQ(ps.exit_code, 0) << ps.err;
  auto cmd = torchfix({"env", "--shell", "cmd", "--snapshot", snapshot});
  ASSERT_EQ(cmd.exit_code, 0) << cmd.err;
  const auto check_comments = [](const std::string& out, const std::string& comment,
                                 const std::vector<std::string>& starts) {
    std::istringstream lines(out);
    std::string previous, line;
    int variables = 0;
    while (std::getline(lines, line)) {
      for (const std::string& start : starts) {
        if (!line.starts_with(start)) continue;
        ++variables;
        EXPECT_TRUE(previous.starts_with(comment)) << line;
      }
      previous = line;
    }
    return variables;
  };
  const int ps_vars = check_comments(ps.out, "# ", {"$env:", "$__torchfix = "});
  const int cmd_vars = check_comments(cmd.out, "rem ", {"set \""});
  EXPECT_GE(ps_vars, 4) << ps.out;
  EXPECT_EQ(ps_vars, cmd_vars) << ps.out << cmd.out;
  EXPECT_NE(ps.out.find("\n$env:CUDA_HOME = '/opt/My CUDA''s $dir/12.8'\n"), std::string::npos) << ps.out;
  EXPECT_NE(ps.out.find("\n$env:TORCH_CUDA_ARCH_LIST = '8.6;12.0+PTX'\n"), std::string::npos) << ps.out;
  EXPECT_NE(ps.out.find("\n$__torchfix = '/opt/My CUDA''s $dir/12.8/bin'; $env:PATH = (@($__torchfix) + "),
            std::string::npos)
      << ps.out;
  EXPECT_NE(cmd.out.find("\nset \"CUDA_HOME=/opt/My CUDA's $dir/12.8\"\n"), std::string::npos) << cmd.out;
  EXPECT_NE(cmd.out.find("\nset \"PATH=/opt/My CUDA's $dir/12.8/bin;%PATH:/opt/My CUDA's $dir/12.8/bin;=%\"\n"),
            std::string::npos)
      << cmd.out;
  EXPECT_TRUE(cmd.out.starts_with("rem Environment for PyTorch on this machine")) << cmd.out;
  auto install = torchfix({"env", "--shell", "cmd", "--install", "--rc", "/nonexistent/x.cmd", "--snapshot", snapshot});
  EXPECT_EQ(install.exit_code, 2);
  EXPECT_NE(install.err.find("torchfix env: cmd has no profile file"), std::string::npos) << install.err;
}

TEST(EnvCli, JsonListsVariablesWithPurposeAndReason) {
  auto r = torchfix({"env", "--json", "--shell", "fish", "--snapshot", fixture("env-gb10-triton35.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["shell"], "fish");
  std::map<std::string, std::string> values;
  for (const auto& v : json["variables"]) {
    values[v["name"]] = v["value"];
    EXPECT_FALSE(v["reason"].get<std::string>().empty());
  }
  EXPECT_EQ(values["TORCH_CUDA_ARCH_LIST"], "12.1+PTX");
  EXPECT_EQ(values["TRITON_PTXAS_PATH"], "/usr/local/cuda-13.0/bin/ptxas");
  EXPECT_EQ(values["CUDA_HOME"], "/usr/local/cuda-13.0");
  EXPECT_TRUE(values.contains("MAX_JOBS"));
  EXPECT_FALSE(values.contains("CUDA_CACHE_MAXSIZE"));  // sm_120 SASS runs on 12.1
}

TEST(EnvCli, RuntimeFilterOnWsl2PtxMachine) {
  auto r = torchfix(
      {"env", "--json", "--for", "runtime", "--shell", "zsh", "--snapshot", fixture("env-wsl2-h100-ptx.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& v : json["variables"]) names.push_back(v["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"LD_LIBRARY_PATH", "CUDA_CACHE_MAXSIZE"}));
}

TEST(EnvCli, InstallTwiceThenUninstallRestoresTheRcFile) {
  std::string tmpl = (fs::temp_directory_path() / "torchfix-envcli-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const fs::path rc = dir / ".bashrc";
  const std::string original = "# mine\r\nalias gs='git status'";
  std::ofstream(rc, std::ios::binary) << original;
  const Environment env = {{"HOME", dir.string()}, {"SHELL", "/bin/bash"}};
  const std::vector<std::string> install = {"env", "--install", "--snapshot", fixture("env-gb10-triton35.json")};
  auto first = torchfix(install, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find(rc.string()), std::string::npos) << first.out;
  const std::string installed = read_file_bytes(rc).value();
  EXPECT_TRUE(installed.starts_with(original + "\r\n# >>> torchfix >>>\r\n")) << installed;
  EXPECT_EQ(read_file_bytes(rc.string() + ".torchfix-backup").value(), original);
  auto second = torchfix(install, env);
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_NE(second.out.find("already up to date"), std::string::npos) << second.out;
  EXPECT_EQ(read_file_bytes(rc).value(), installed);
  auto removed = torchfix({"env", "--uninstall", "--rc", rc.string(), "--shell", "bash"}, env);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(read_file_bytes(rc).value(), original);
  // Unbalanced markers: refused, the file unchanged.
  const std::string broken = original + "\n# >>> torchfix >>>\n";
  std::ofstream(rc, std::ios::binary | std::ios::trunc) << broken;
  auto refused = torchfix(install, env);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("unbalanced"), std::string::npos) << refused.err;
  EXPECT_EQ(read_file_bytes(rc).value(), broken);
  if (testing::Test::HasFailure()) {
    std::cerr << "kept test folder: " << dir << "\n";
  } else {
    fs::remove_all(dir);
  }
}

TEST(EnvCli, InstallWithOnlyLiveFactsChangedChangesNothing) {
  // MemAvailable differs between two runs on one machine: the MAX_JOBS
  // comment changes, its value does not. Neither the rc file nor its only
  // backup may be rewritten (issue 9).
  std::string tmpl = (fs::temp_directory_path() / "torchfix-envcli-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  auto snapshot = nlohmann::json::parse(read_file_bytes(fixture("env-gb10-triton35.json")).value());
  std::ofstream(dir / "morning.json") << snapshot.dump();
  snapshot["platform"]["memory_available_bytes"] = 100'000'000'000ull;
  std::ofstream(dir / "evening.json") << snapshot.dump();
  const fs::path rc = dir / ".bashrc";
  const std::string original = "alias ll='ls -l'\n";
  std::ofstream(rc, std::ios::binary) << original;
  const Environment env = {{"HOME", dir.string()}, {"SHELL", "/bin/bash"}};
  auto first = torchfix({"env", "--install", "--snapshot", (dir / "morning.json").string()}, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string installed = read_file_bytes(rc).value();
  auto second = torchfix({"env", "--install", "--snapshot", (dir / "evening.json").string()}, env);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("already up to date"), std::string::npos) << second.out;
  EXPECT_EQ(read_file_bytes(rc).value(), installed);
  EXPECT_EQ(read_file_bytes(rc.string() + ".torchfix-backup").value(), original);
  // The printed snippets do differ, in the comment only.
  auto morning = torchfix({"env", "--shell", "bash", "--snapshot", (dir / "morning.json").string()}, env);
  auto evening = torchfix({"env", "--shell", "bash", "--snapshot", (dir / "evening.json").string()}, env);
  EXPECT_NE(morning.out, evening.out);
  if (testing::Test::HasFailure()) {
    std::cerr << "kept test folder: " << dir << "\n";
  } else {
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace torchfix::shellenv
