#include "cli/nvcc_wrap.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/arch/nvcc_args.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_settings = "torchfix-nvcc.json";

// The settings file: $TORCHFIX_NVCC_CONF, else next to argv[0] (looked up in
// PATH when argv[0] has no folder).
fs::path settings_path(const char* argv0) {
  if (const char* conf = std::getenv("TORCHFIX_NVCC_CONF"); conf && *conf) return conf;
  const std::string self = argv0;
  if (self.find('/') != std::string::npos) return fs::path(self).parent_path() / k_settings;
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    std::error_code ec;
    if (!dir.empty() && fs::exists(fs::path(dir) / self, ec) && fs::exists(fs::path(dir) / k_settings, ec)) {
      return fs::path(dir) / k_settings;
    }
  }
  return {};
}

// What the compile is of: the first file after -c (cpp_extension writes
// "-c -c FILE"), else the first .cu, else "link".
std::string subject_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != "-c" && args[i] != "--compile") continue;
    for (std::size_t j = i + 1; j < args.size(); ++j) {
      if (!args[j].starts_with('-')) return args[j];
    }
  }
  for (const std::string& a : args) {
    if (a.ends_with(".cu")) return a;
  }
  return "link";
}

// Appends one line to the build log in a single write (O_APPEND: whole lines
// even with parallel compiles and the build's own output in the same file).
void log_line(const std::string& log, const std::string& line) {
  if (log.empty()) return;
#ifdef _WIN32
  const int fd =
      ::_open(log.c_str(), _O_WRONLY | _O_CREAT | _O_APPEND | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
#else
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
#endif
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

// Rewrites the arch flags of an nvcc environment variable in place; returns what it held.
NvccRewrite strip_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return {};
  NvccRewrite r = strip_arch_flags(value);
  if (!r.changed()) return r;
  std::string rest;
  for (const std::string& a : r.args) rest += (rest.empty() ? "" : " ") + a;
#ifdef _WIN32
  ::_putenv_s(name, rest.c_str());
#else
  ::setenv(name, rest.c_str(), 1);
#endif
  return r;
}

// A version or help query compiles nothing: no targets are added to it.
bool is_query(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-V" || a == "--version" || a == "-h" || a == "--help" || a == "--list-gpu-arch" ||
        a == "--list-gpu-code" || a == "-dryrun" || a == "--dryrun") {
      return true;
    }
  }
  return args.empty();
}

}  // namespace

bool started_as_nvcc(const char* argv0) {
  return argv0 && fs::path(argv0).filename() == "nvcc";
}

int nvcc_wrap_main(int argc, char** argv) {
  const fs::path settings = settings_path(argv[0]);
  // util's reader: a regular file of at most 1 MiB (the file torchfix
  // writes is a few hundred bytes), never a FIFO that would block the build.
  util::ReadLimits limits;
  limits.max_bytes = 1u << 20;
  limits.what = "nvcc settings";
  const auto text = util::read_file_bytes(settings, limits);  // an empty path: ENOENT
  const nlohmann::json conf = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!conf.is_object() || !conf.contains("real") || !conf["real"].is_string() || !conf.contains("targets") ||
      !conf["targets"].is_array() ||
      !std::ranges::all_of(conf["targets"], [](const auto& t) { return t.is_string(); }) ||
      (conf.contains("log") && !conf["log"].is_string())) {
    std::cerr << "torchfix nvcc: no readable " << k_settings << " next to " << argv[0]
              << "; this nvcc is torchfix's stand-in, run by `torchfix build`; call the toolkit's nvcc directly\n";
    return 127;
  }
  const std::string real = conf["real"].get<std::string>();
  const std::vector<std::string> targets = conf["targets"].get<std::vector<std::string>>();
  const std::string log = conf.value("log", std::string());
  std::error_code ec;
  if (fs::equivalent(real, "/proc/self/exe", ec)) {
    std::cerr << "torchfix nvcc: " << settings.string() << " names torchfix itself as the real nvcc\n";
    return 127;
  }

  const std::vector<std::string> args(argv + 1, argv + argc);
  NvccRewrite r = rewrite_arch_flags(args, targets);
  for (const char* name : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) {
    NvccRewrite env = strip_variable(name);
    if (!env.changed()) continue;
    if (!r.changed() && !is_query(args)) r.args.insert(r.args.end(), targets.begin(), targets.end());
    for (std::string& f : env.removed) r.removed.push_back(name + std::string(": ") + f);
    for (std::string& a : env.asked) r.asked.push_back(a);
  }
  if (r.changed()) {
    std::string removed;
    for (const std::string& f : r.removed) removed += (removed.empty() ? "" : " ") + f;
    std::string wanted;
    for (const std::string& t : targets) wanted += (wanted.empty() ? "" : " ") + t;
    log_line(log, "torchfix nvcc: " + subject_of(args) + ": replaced [" + removed + "] with [" + wanted + "]");
  }
  std::vector<char*> exec_argv;
  std::string program = real;
  exec_argv.push_back(program.data());
  for (std::string& a : r.args) exec_argv.push_back(a.data());
  exec_argv.push_back(nullptr);
  ::execv(real.c_str(), exec_argv.data());
  std::cerr << "torchfix nvcc: cannot run " << real << ": " << std::strerror(errno) << "\n";
  return 127;
}

}  // namespace torchfix::cli
