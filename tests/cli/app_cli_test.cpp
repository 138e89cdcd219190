// torchfix as a new user meets it: the real binary in real processes, with
// no command, a mistyped one, bad option values, a mistyped --python, a
// report given as a snapshot, colour and locale variables, and bytes that
// are not UTF-8 in the environment, on PATH and in file names.

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

ProcessResult torchfix(std::vector<std::string> args, Environment env = {}) {
  env.emplace("PATH", "/usr/local/cuda/bin:/usr/bin:/bin");
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Issue 19: every --json document is versioned alike, by an integer
// schema_version (fleet's old "schema" string stays one release beside it).
TEST(AppCli, EveryJsonDocumentCarriesAnIntegerSchemaVersion) {
  TORCHFIX_LINUX_ONLY("passes a /path argument, which CLI11 on Windows reads as an option");
  const std::string h200 = k_fixtures + "h200-torch211-cu130.json";
  const std::vector<std::vector<std::string>> commands = {
      {"doctor", "--json", "--snapshot", h200},
      {"inspect", "--json", std::string(TORCHFIX_SOURCE_DIR) + "/recipes"},
      {"env", "--json", "--shell", "bash", "--snapshot", h200},
      {"build", "flash-attn", "--dry-run", "--json", "--snapshot", h200},
      {"recipes", "--json"},
      {"fleet", "--json", "--snapshots", h200},
      {"version", "--json"}};
  for (const auto& args : commands) {
    auto r = torchfix(args);
    ASSERT_LE(r.exit_code, 1) << args[0] << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << args[0] << " printed no JSON object: " << r.out;
    EXPECT_EQ(j.value("schema_version", nlohmann::json()), 1) << args[0];
  }
}

TEST(AppCli, NoCommandPrintsTheUsage) {
  auto r = torchfix({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "doctor")) << r.err;
  EXPECT_TRUE(has(r.err, "inspect")) << r.err;
  EXPECT_FALSE(has(r.err, "A subcommand is required")) << r.err;
  r = torchfix({"-v"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "doctor")) << r.err;
}

TEST(AppCli, VersionNamesTheToolAndItsDistribution) {
  auto r = torchfix({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("torchfix " TORCHFIX_VERSION " (torchfix-gpu")) << r.out;
  EXPECT_TRUE(has(r.out, "not the TorchFix linter")) << r.out;
}

TEST(AppCli, HelpPrintsTheUsageOnStdout) {
  auto r = torchfix({"help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "doctor")) << r.out;
  EXPECT_TRUE(has(r.out, "build")) << r.out;
  r = torchfix({"help", "env"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "--install")) << r.out;
  r = torchfix({"help", "nonsense"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "unknown command 'nonsense'")) << r.err;
}

// One line on stderr, starting with the command's name.
void expect_one_error_line(const ProcessResult& r, std::string_view start, std::string_view part) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.err.starts_with(start)) << r.err;
  EXPECT_TRUE(has(r.err, part)) << r.err;
  EXPECT_EQ(std::ranges::count(r.err, '\n'), 1) << r.err;
  EXPECT_FALSE(has(r.err, "Usage:")) << r.err;
  EXPECT_FALSE(has(r.err, "not expected")) << r.err;
}

TEST(AppCli, UnknownCommandGetsTheNearestOne) {
  expect_one_error_line(torchfix({"doktor"}), "torchfix: ", "unknown command 'doktor'; did you mean 'doctor'?");
  expect_one_error_line(torchfix({"inpsect", "/tmp"}), "torchfix: ", "did you mean 'inspect'?");
  expect_one_error_line(torchfix({"xyzzy"}), "torchfix: ", "`torchfix --help` lists the commands");
  expect_one_error_line(torchfix({"help", "doktr"}), "torchfix help: ", "did you mean 'doctor'?");
}

TEST(AppCli, UnknownOptionGetsTheNearestOne) {
  expect_one_error_line(torchfix({"doctor", "--jsn"}),
                        "torchfix doctor: ", "unknown option '--jsn'; did you mean '--json'?");
  expect_one_error_line(torchfix({"-V"}), "torchfix: ", "unknown option '-V'; did you mean '--version'?");
  expect_one_error_line(torchfix({"--versoin"}), "torchfix: ", "did you mean '--version'?");
  expect_one_error_line(torchfix({"inspect", "/tmp", "--gpuu", "12.0"}), "torchfix inspect: ", "did you mean '--gpu'?");
  expect_one_error_line(torchfix({"build", "--zzzzzz=3"}),
                        "torchfix build: ", "`torchfix build --help` lists the options");
  expect_one_error_line(torchfix({"doctor", "stray"}), "torchfix doctor: ", "unexpected argument 'stray'");
  expect_one_error_line(torchfix({"doctor", "--gpu"}), "torchfix doctor: ", "--gpu needs a value");
  expect_one_error_line(torchfix({"inspect"}), "torchfix inspect: ", "required");
}

TEST(AppCli, TimeoutValuesAreCheckedWithAPlainMessage) {
  for (const std::string value : {"0", "-1"}) {
    auto r = torchfix({"doctor", "--timeout", value});
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_TRUE(has(r.err, "more than 0 seconds")) << r.err;
    EXPECT_FALSE(has(r.err, "e+308")) << r.err;
  }
  auto r = torchfix({"doctor", "--timeout", "abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "'abc' is not a number of seconds")) << r.err;
  EXPECT_FALSE(has(r.err, "not in range")) << r.err;
  r = torchfix({"build", "--src", "/tmp", "--jobs", "0", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "from 1 to 4096")) << r.err;
}

TEST(AppCli, MistypedPythonIsAnErrorNotAWarning) {
  TORCHFIX_LINUX_ONLY("runs /bin/false as the Python");
  auto r = torchfix({"doctor", "--no-binaries", "--python", "/nonexistent/python"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "--python /nonexistent/python: no such executable")) << r.err;
  r = torchfix({"doctor", "--no-binaries", "--python", "no-such-python-here"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "not found on PATH")) << r.err;
  // A program that runs but is no Python says how it ended.
  r = torchfix({"doctor", "--no-binaries", "--python", "/bin/false"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "/bin/false: exited with code 1")) << r.err;
  EXPECT_TRUE(has(r.err, "is it a Python 3 interpreter?")) << r.err;
}

TEST(AppCli, DoctorReportIsReadAsTheSnapshotItCarries) {
  TempDir dir;
  auto report = torchfix({"doctor", "--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--json"});
  ASSERT_EQ(report.exit_code, 1) << report.err;
  write_file(dir / "report.json", report.out);
  auto replay = torchfix({"doctor", "--snapshot", (dir / "report.json").string(), "--json"});
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_EQ(nlohmann::json::parse(replay.out)["findings"], nlohmann::json::parse(report.out)["findings"]);
  // A report whose snapshot key is not a snapshot is refused, not read as an empty machine.
  write_file(dir / "bad.json", R"({"schema_version": 1, "findings": [], "snapshot": 3})");
  auto bad = torchfix({"doctor", "--snapshot", (dir / "bad.json").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(has(bad.err, "bad.json")) << bad.err;
}

TEST(AppCli, SchemaMismatchSaysWhatWithoutLibraryTags) {
  TempDir dir;
  write_file(dir / "s.json", R"({"schema_version": 1, "toolkits": [{"nvcc": 5}]})");
  auto r = torchfix({"doctor", "--snapshot", (dir / "s.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "must be string")) << r.err;
  EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
  write_file(dir / "t.json", R"({"schema_version": 1, "toolkits": [{}]})");
  r = torchfix({"doctor", "--snapshot", (dir / "t.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
  EXPECT_TRUE(has(r.err, "'nvcc'")) << r.err;
}

TEST(AppCli, NoColorBeatsCliColorForceAndCLocaleGetsAsciiMarks) {
  const std::string snapshot = k_fixtures + "F1-rtx5090d-torch26-cu126.json";
  auto r = torchfix({"doctor", "--snapshot", snapshot}, {{"CLICOLOR_FORCE", "1"}, {"LANG", "C.UTF-8"}});
  EXPECT_TRUE(has(r.out, "\x1b[31m")) << "CLICOLOR_FORCE alone forces colour";
  EXPECT_TRUE(has(r.out, "[✗]")) << r.out;
  r = torchfix({"doctor", "--snapshot", snapshot}, {{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "1"}});
  EXPECT_FALSE(has(r.out, "\x1b[")) << r.out;
  r = torchfix({"doctor", "--snapshot", snapshot}, {{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}});
  EXPECT_TRUE(has(r.out, "[x] torch 2.6.0+cu126 cannot run on GPU 0")) << r.out;
  EXPECT_FALSE(has(r.out, "✗")) << r.out;
}

TEST(AppCli, BytesThatAreNotUtf8NeverStopTheJson) {
  TORCHFIX_LINUX_ONLY(
      "file names that are not UTF-8 are bytes on POSIX; Windows names are UTF-16 (Wine without a "
      "locale cannot create them)");
  // An environment value, a PATH entry and a --python path with a Latin-1 byte.
  TempDir dir;
  std::filesystem::create_directories(dir / "bin\xe9");
  auto r = torchfix({"doctor", "--json", "--no-binaries", "--timeout", "20"},
                    {{"CUDA_HOME", "/opt/cuda\xff"},
                     {"PATH", (dir / "bin\xe9").string() + ":/usr/local/cuda/bin:/usr/bin:/bin"},
                     {"TORCH_CUDA_ARCH_LIST", "8.6\xfe"}});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_FALSE(has(r.err, "internal error")) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["snapshot"]["environment"]["CUDA_HOME"], "/opt/cuda\xef\xbf\xbd");

  // The snapshot alone on stdout too (doctor --save-snapshot -, what fleet reads).
  r = torchfix({"doctor", "--save-snapshot", "-", "--no-binaries", "--timeout", "20"},
               {{"CUDA_HOME", "/opt/cuda\xff"}, {"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out << r.err;

  // A snapshot saved and a log written from such a machine are still JSON.
  r = torchfix({"doctor", "--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--log",
                (dir / "log.json").string(), "--json"},
               {{"WEIRD", "a\xc3("}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(testing::read_file(dir / "log.json"), nullptr, false).is_discarded());
}

TEST(AppCli, DoctorLogRedactsUrlCredentialsAndTokenShapedNames) {
  TORCHFIX_LINUX_ONLY("checks POSIX file modes or symbolic links");
  TempDir dir;
  const auto log = dir / "log.json";
  auto r = torchfix({"doctor", "--snapshot", k_fixtures + "F3-p100-torch28-cu128.json", "--log", log.string()},
                    {{"PIP_INDEX_URL", "https://u:pipsecret@host/simple"},
                     {"HTTPS_PROXY", "http://user:proxysecret@proxy:3128"},
                     {"http_proxy", "user:barepw@proxy:3128"},
                     {"DATABASE_URL", "postgres://admin:dbsecret@db:5432/x"},
                     {"CUDA_HOME", "https://cu:cudasecret@mirror/cuda"},
                     {"GH_PAT", "patvalue"},
                     {"CI_JOB_JWT", "jwtvalue"},
                     {"MY_SERVICE_KEY", "keyvalue"},
                     {"NOTES", "see ghp_0123456789abcdefghijABCDEFGHIJ0123"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string text = testing::read_file(log);
  for (const char* secret : {"pipsecret", "proxysecret", "barepw", "dbsecret", "cudasecret", "patvalue", "jwtvalue",
                             "keyvalue", "ghp_0123"}) {
    EXPECT_FALSE(has(text, secret)) << secret << " reached the log";
  }
  auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json["environment"]["PIP_INDEX_URL"], "https://<redacted>@host/simple");
  EXPECT_EQ(json["environment"]["GH_PAT"], "<redacted>");
  EXPECT_EQ(json["environment"]["PATH"], "/usr/local/cuda/bin:/usr/bin:/bin");
  const auto mode = std::filesystem::status(log).permissions() & std::filesystem::perms::all;
  EXPECT_EQ(mode, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(AppCli, WheelMemberNamesReachTheTerminalEscaped) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "python3 writes the test wheel";
  TempDir dir;
  // A wheel whose member name carries a window-title sequence and a
  // clear-screen, holding a truncated ELF so that it is listed.
  const auto wheel = dir / "evil-1.0-py3-none-any.whl";
  const std::string script =
      "import sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
      "    z.writestr(zipfile.ZipInfo('evil/lib\\x1b]0;owned\\x07\\x1b[2J.so'), b'\\x7fELF\\x02\\x01\\x01' + "
      "bytes(9))\n";
  SystemProcessRunner runner;
  auto made = runner.run(
      Command{"/usr/bin/python3", {"-c", script, wheel.string()}, Environment{}, {}, std::chrono::seconds(60)});
  ASSERT_TRUE(made && made->succeeded()) << (made ? made->err : made.error().message);
  auto r = torchfix({"inspect", wheel.string()}, {{"CLICOLOR_FORCE", "1"}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "evil/lib\\x1b]0;owned\\x07\\x1b[2J.so")) << r.err;
  EXPECT_FALSE(has(r.out + r.err, "\x1b]")) << r.err;
  EXPECT_FALSE(has(r.out + r.err, "\x1b[2J")) << r.err;
}

// Issue 16: a real Windows CUDA DLL from a PyPI win_amd64 wheel, read through
// the binary inside the wheel. .ci/test downloads it (sha256-checked) and sets
// TORCHFIX_WIN_WHEEL_DIR; elsewhere the test says how to get it.
TEST(AppCli, InspectJudgesTheRealWindowsCudaDllInAPypiWheel) {
  TORCHFIX_LINUX_ONLY("passes a /path argument, which CLI11 on Windows reads as an option");
  const char* dir = std::getenv("TORCHFIX_WIN_WHEEL_DIR");
  const std::string wheel = std::string(dir ? dir : "") + "/nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl";
  if (!dir || !std::filesystem::is_regular_file(wheel)) {
    GTEST_SKIP() << "set TORCHFIX_WIN_WHEEL_DIR to a folder with " << wheel
                 << " (pip download --platform win_amd64 --no-deps --only-binary=:all: nvidia-nvjpeg-cu12==12.4.0.76)";
  }
  auto r = torchfix({"inspect", wheel, "--gpu", "12.0"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "!nvidia/nvjpeg/bin/nvjpeg64_12.dll (pe, .nv_fatbin; 10 kernel modules")) << r.out;
  EXPECT_TRUE(has(r.out, "runs natively on 12.0 (sm_120): SASS in all 10 kernel modules")) << r.out;
  r = torchfix({"inspect", wheel, "--gpu", "3.7"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "cannot run on 3.7 (sm_37): no usable SASS or PTX in 10 of 10 kernel modules")) << r.out;
}

TEST(AppCli, InspectJsonWithFileNamesThatAreNotUtf8) {
  TORCHFIX_LINUX_ONLY(
      "file names that are not UTF-8 are bytes on POSIX; Windows names are UTF-16 (Wine without a "
      "locale cannot create them)");
  TempDir dir;
  write_file(dir / "lib\xff.so", std::string("\x7f"
                                             "ELF\x02\x01\x01",
                                             7) +
                                     std::string(9, '\0'));
  auto r = torchfix({"inspect", "--json", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(has(r.err, "internal error")) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_EQ(json["files"].size(), 1u) << r.out;
  EXPECT_TRUE(has(json["files"][0]["path"].get<std::string>(), "lib\xef\xbf\xbd.so"));
}

TEST(AppCli, InspectErrorsGoToStderrWithTerminalEscapesShownNotRun) {
  TORCHFIX_LINUX_ONLY("passes a /path argument, which CLI11 on Windows reads as an option");
  TempDir dir;
  // A truncated ELF whose name carries a window-title sequence and a clear-screen.
  const std::string name = "lib\x1b]0;owned\x07\x1b[2J.so";
  write_file(dir / name, std::string("\x7f"
                                     "ELF\x02\x01\x01",
                                     7) +
                             std::string(9, '\0'));
  auto r = torchfix({"inspect", dir.path().string()}, {{"CLICOLOR_FORCE", "1"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(has(r.out, "lib")) << "errors belong on stderr: " << r.out;
  EXPECT_TRUE(has(r.err, "lib\\x1b]0;owned\\x07\\x1b[2J.so")) << r.err;
  EXPECT_FALSE(has(r.err, "\x1b]")) << r.err;
  EXPECT_FALSE(has(r.err, "\x1b[2J")) << r.err;
  r = torchfix({"inspect", "/nonexistent/libx.so"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has(r.err, "/nonexistent/libx.so")) << r.err;
}

TEST(AppCli, OutputThatCannotBeWrittenIsExitTwo) {
  TORCHFIX_LINUX_ONLY("writes to /dev/full");
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  for (const std::string& args : {"doctor --json --snapshot " + k_fixtures + "F1-rtx5090d-torch26-cu126.json",
                                  std::string("--version"), std::string("doctor --help")}) {
    SystemProcessRunner runner;
    const Environment env = {{"PATH", "/usr/bin:/bin"}};
    auto r = runner.run(Command{"/bin/sh",
                                {"-c", "exec \"$0\" " + args + " > /dev/full", TORCHFIX_BINARY},
                                env,
                                {},
                                std::chrono::seconds(120)});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->exit_code, 2) << args << ": " << r->err;
    EXPECT_TRUE(r->err.starts_with(args.starts_with("doctor") ? "torchfix doctor: " : "torchfix: ")) << r->err;
    EXPECT_TRUE(has(r->err, "cannot write the output: ")) << r->err;
    EXPECT_EQ(std::ranges::count(r->err, '\n'), 1) << r->err;  // one line, said once
  }
}

TEST(AppCli, NvidiaSmiNamesAreWhatIfGpus) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  for (const std::string name : {"NVIDIA H100 80GB HBM3", "NVIDIA GH200 480GB", "NVIDIA RTX 6000 Ada Generation",
                                 "H100 SXM5", "Jetson Thor", "NVIDIA GeForce RTX 5070 Ti", "Tesla V100-SXM2-32GB"}) {
    auto r = torchfix({"arch", "--gpu", name});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  // Every GPU name in the snapshot fixtures (what nvidia-smi and NVML printed
  // on those machines) gives its own compute capability's arch list.
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(k_fixtures)) {
    if (entry.path().extension() != ".json") continue;
    const auto json = nlohmann::json::parse(testing::read_file(entry.path()), nullptr, false);
    if (!json.is_object() || !json.contains("gpus") || !json["gpus"].is_array()) continue;
    for (const auto& gpu : json["gpus"]) {
      if (!gpu.contains("name") || !gpu["name"].is_string() || !gpu.contains("compute_capability")) continue;
      auto r = torchfix({"arch", "--gpu", gpu["name"].get<std::string>()});
      EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << gpu["name"] << ": " << r.err;
      EXPECT_EQ(r.out, gpu["compute_capability"].get<std::string>() + "+PTX\n") << entry.path() << ": " << gpu["name"];
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
  auto r = torchfix({"arch", "--gpu", "5070ti"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "did you mean 'GeForce RTX 5070 Ti' (12.0)?")) << r.err;
  r = torchfix({"doctor", "--no-binaries", "--gpu", "rtx5090"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("torchfix doctor: unknown GPU 'rtx5090': did you mean")) << r.err;
}

TEST(AppCli, VersionSaysCommitBuildKindTargetAndTablesDate) {
  TORCHFIX_LINUX_ONLY("expects the Linux target in --version");
  auto r = torchfix({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\ncommit ")) << r.out;
  // The suite runs on a source build (.ci/test) and on the static one
  // (.ci/package): each says which it is, and they differ.
#if TORCHFIX_STATIC_BUILD
  EXPECT_TRUE(has(r.out, ", static")) << r.out;  // "static except glibc"; "static" on Windows
  EXPECT_FALSE(has(r.out, "source build")) << r.out;
#else
  EXPECT_TRUE(has(r.out, ", source build (")) << r.out;
  EXPECT_FALSE(has(r.out, "static except glibc")) << r.out;
#endif
  EXPECT_TRUE(has(r.out, "linux")) << r.out;
  EXPECT_TRUE(has(r.out, ", tables of ")) << r.out;
  const std::string text = r.out;
  r = torchfix({"version", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["version"], TORCHFIX_VERSION);
  EXPECT_TRUE(json["commit"].get<std::string>().size() == 12 || json["commit"] == "unknown") << json.dump();
  const std::string build = json["build"].get<std::string>();
  EXPECT_TRUE(build.starts_with("source build") || has(build, "static except glibc")) << json.dump();
  EXPECT_TRUE(has(text, build)) << "--version and --json name one build: " << text;
  EXPECT_TRUE(has(json["target"].get<std::string>(), "linux")) << json.dump();
  EXPECT_TRUE(has(r.out, "\"tables_date\"")) << r.out;
}

// Options in named groups (cli/option_groups.cpp), the same in --help and the man page.
TEST(AppCli, HelpAndTheManPageShowTheOptionsInGroups) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix({"doctor", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"\nWhat-if:\n  --gpu NAME|X.Y", "\nOutput:\n  --json ", "\nWhat is probed:\n  --python PATH",
                           "\nActions:\n  --run "}) {
    EXPECT_TRUE(has(r.out, part)) << part << "\n" << r.out;
  }
  // --json is an output option, not a what-if: each option in one group.
  EXPECT_LT(r.out.find("  --json "), r.out.find("What-if:")) << r.out;
  r = torchfix({"build", "--help"});
  EXPECT_TRUE(has(r.out, "\nTarget GPUs:\n  --arch ")) << r.out;
  r = torchfix({"fleet", "--help"});
  EXPECT_TRUE(has(r.out, "\nSlurm:\n  --partition ")) << r.out;
  // Every option of a grouped command is in a named group: "Options" keeps --help alone.
  for (const std::string command :
       {"doctor", "inspect", "build", "recipes", "env", "arch", "fleet", "fix", "tune", "version"}) {
    r = torchfix({command, "--help"});
    const auto start = r.out.find("\nOptions:\n");
    ASSERT_NE(start, std::string::npos) << r.out;
    const std::string options = r.out.substr(start + 10, r.out.find("\n\n", start + 10) - start - 10);
    EXPECT_TRUE(options.starts_with("  -h,--help ") && options.find('\n') == std::string::npos)
        << command << ": an option outside the groups of cli/option_groups.cpp:\n"
        << options;
  }
  r = torchfix({"man"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doctor = r.out.find(".SS \"torchfix doctor\"");
  ASSERT_NE(doctor, std::string::npos) << r.out;
  const auto what_if = r.out.find(".PP\n\\fIWhat\\-if:\\fR\n.TP\n\\fB\\-\\-gpu\\fR", doctor);
  EXPECT_NE(what_if, std::string::npos) << r.out.substr(doctor, 2000);
  EXPECT_LT(what_if, r.out.find(".SS \"torchfix inspect\"")) << "the doctor's group, not another command's";
}

TEST(AppCli, HelpNamesPlaceholdersExamplesAndVariables) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix({"doctor", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "--gpu NAME|X.Y")) << r.out;
  EXPECT_TRUE(has(r.out, "--python PATH")) << r.out;
  EXPECT_FALSE(has(r.out, " TEXT")) << r.out;
  EXPECT_TRUE(has(r.out, "Examples:")) << r.out;
  EXPECT_TRUE(has(r.out, "TORCHFIX_DATA_DIR")) << r.out;
  EXPECT_TRUE(has(r.out, "NO_COLOR")) << r.out;
  EXPECT_TRUE(has(r.out, "-v, --verbose")) << r.out;
  EXPECT_TRUE(has(r.out, "--color WHEN")) << r.out;
  for (const std::string command :
       {"inspect", "env", "arch", "fleet", "build", "tune", "recipes", "fix", "version", "completions", "man"}) {
    r = torchfix({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command << r.err;
    EXPECT_TRUE(has(r.out, "Examples:\n  torchfix " + command)) << r.out;
    EXPECT_FALSE(has(r.out, " TEXT")) << command << ": " << r.out;  // every option names its value
  }
  r = torchfix({"completions", "--help"});
  EXPECT_TRUE(has(r.out, "  shell bash|zsh|fish REQUIRED")) << r.out;
  // The top-level help too: what to run first, and the variables every command reads.
  r = torchfix({"--help"});
  EXPECT_TRUE(has(r.out, "Examples:\n  torchfix doctor ")) << r.out;
  EXPECT_TRUE(has(r.out, "Environment:\n  TORCHFIX_DATA_DIR ")) << r.out;
  r = torchfix({"tune", "--help"});
  EXPECT_TRUE(has(r.out, "--model resnet50|vit_b_16|transformer")) << r.out;
  EXPECT_TRUE(has(r.out, "--batch-size N")) << r.out;
  EXPECT_TRUE(has(r.out, "torchfix tune --model resnet50")) << r.out;
}

TEST(AppCli, ColorAndQuietOptions) {
  const std::string snapshot = k_fixtures + "F1-rtx5090d-torch26-cu126.json";
  // Pipes get no colour unless forced; --color never beats CLICOLOR_FORCE and FORCE_COLOR.
  auto r = torchfix({"--color", "always", "doctor", "--snapshot", snapshot});
  EXPECT_TRUE(has(r.out, "\x1b[")) << r.out;
  r = torchfix({"doctor", "--snapshot", snapshot}, {{"FORCE_COLOR", "1"}});
  EXPECT_TRUE(has(r.out, "\x1b[")) << r.out;
  r = torchfix({"doctor", "--color", "never", "--snapshot", snapshot}, {{"CLICOLOR_FORCE", "1"}, {"FORCE_COLOR", "1"}});
  EXPECT_FALSE(has(r.out, "\x1b[")) << r.out;
  EXPECT_EQ(r.exit_code, 1);
  r = torchfix({"doctor", "--color", "sometimes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("torchfix doctor: --color")) << r.err;
  // -q: nothing on stdout, the exit code still the diagnosis'.
  r = torchfix({"doctor", "-q", "--snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(AppCli, WhatIfTorchAndDriverValuesAreChecked) {
  for (const std::string bad : {"2.6.0cu124", "2.6.0 +cu124"}) {
    auto r = torchfix({"doctor", "--no-binaries", "--torch", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_TRUE(has(r.err, "did you mean 2.6.0+cu124?")) << r.err;
  }
  auto r = torchfix({"doctor", "--no-binaries", "--torch", "2.6.0+cu999"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r.err, "torchfix doctor: --torch 2.6.0+cu999: PyTorch publishes no cu999 wheels")) << r.err;
  r = torchfix({"doctor", "--no-binaries", "--driver", ""});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r.err, "--driver: needs a value")) << r.err;
}

}  // namespace
}  // namespace torchfix
