#include "fixtures.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include "probe/process.hpp"

namespace torchfix::test {
namespace fs = std::filesystem;

namespace {

fs::path cache_dir() {
  fs::path dir = TORCHFIX_FIXTURE_CACHE;
  fs::create_directories(dir);
  return dir;
}

// Builds `output` in the cache with the arguments that `make_args(out)`
// returns for an output path; compiles to a unique name, then renames, so
// parallel test processes never see half-written files.
Expected<fs::path> cached(const std::string& key, const std::string& output,
                          const std::function<std::vector<std::string>(const fs::path&)>& make_args,
                          std::optional<fs::path> program = std::nullopt) {
  const auto nvcc = program ? program : find_nvcc();
  if (!nvcc) return fail("nvcc not found");
  const fs::path dir = cache_dir() / std::to_string(std::hash<std::string>{}(key + "\n" + output));
  const fs::path target = dir / output;
  if (fs::exists(target)) return target;
  fs::create_directories(dir);
  const fs::path temp = dir / (output + ".tmp" + std::to_string(::getpid()));
  Command command;
  // SystemProcessRunner closes stdin; nvcc 13 then fails with "Failed to
  // preprocess host compiler properties" (its host-compiler probe reuses fd
  // 0), so give it /dev/null through a shell.
  command.program = "/bin/sh";
  command.args = {"-c", "exec \"$0\" \"$@\" </dev/null", nvcc->string()};
  const auto nvcc_args = make_args(temp);
  command.args.insert(command.args.end(), nvcc_args.begin(), nvcc_args.end());
  command.working_directory = dir.string();
  command.timeout = std::chrono::seconds(300);
  SystemProcessRunner runner;
  TF_TRY(result, runner.run(command));
  if (!result.succeeded()) {
    std::string line = nvcc->filename().string();
    for (const auto& a : nvcc_args) line += " " + a;
    return fail(line + " failed (exit " + std::to_string(result.exit_code) + "):\n" + result.err + result.out);
  }
  fs::rename(temp, target);
  return target;
}

}  // namespace

std::optional<fs::path> find_nvcc() {
  if (const char* env = std::getenv("TORCHFIX_NVCC"); env && *env) {
    if (fs::exists(env)) return fs::path(env);
    return std::nullopt;
  }
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return fs::path("/usr/local/cuda/bin/nvcc");
  Environment env;
  if (const char* path = std::getenv("PATH")) env["PATH"] = path;
  if (auto found = find_program("nvcc", env)) return fs::path(*found);
  return std::nullopt;
}

std::string kernel_source(std::string_view kernel_name) {
  const std::string name(kernel_name);
  return "__global__ void " + name +
         "(float* x) { x[threadIdx.x] *= 2.0f; }\n"
         "void launch_" +
         name + "(float* x) { " + name + "<<<1, 32>>>(x); }\n";
}

Expected<fs::path> compile(const std::string& source, const std::vector<std::string>& flags,
                           const std::string& output) {
  std::string key = source;
  for (const auto& f : flags) key += "\n" + f;
  return cached(key, output, [&](const fs::path& out) {
    const fs::path cu = out.string() + ".cu";
    std::ofstream(cu) << source;
    std::vector<std::string> args = flags;
    args.insert(args.end(), {cu.string(), "-o", out.string()});
    return args;
  });
}

Expected<fs::path> link_shared(const std::vector<fs::path>& objects, const std::string& output, Linker linker) {
  std::string key = linker == Linker::host ? "link-shared-host" : "link-shared-nvcc";
  for (const auto& o : objects) key += "\n" + o.string();
  std::optional<fs::path> program;
  if (linker == Linker::host) {
    Environment env;
    if (const char* path = std::getenv("PATH")) env["PATH"] = path;
    const auto cxx = find_program("g++", env);
    if (!cxx) return fail("g++ not found on PATH");
    program = fs::path(*cxx);
  }
  return cached(
      key, output,
      [&](const fs::path& out) {
        std::vector<std::string> args = {"-shared"};
        for (const auto& o : objects) args.push_back(o.string());
        args.insert(args.end(), {"-o", out.string()});
        return args;
      },
      program);
}

Expected<fs::path> fixture(const std::string& name) {
  using Flags = std::vector<std::string>;
  const std::string k = kernel_source("k");
  auto object = [&](const std::string& kernel, Flags flags, const std::string& out) {
    flags.insert(flags.begin(), {"-c", "-Xcompiler", "-fPIC"});
    return compile(kernel_source(kernel), flags, out);
  };
  if (name == "sm80.o") return object("k", {"-gencode", "arch=compute_80,code=sm_80"}, name);
  if (name == "sm90a.o") return object("k", {"-gencode", "arch=compute_90a,code=sm_90a"}, name);
  if (name == "ptx120.o") return object("k", {"-gencode", "arch=compute_120,code=compute_120"}, name);
  if (name == "ptx90.o") return object("k", {"-gencode", "arch=compute_90,code=compute_90"}, name);
  if (name == "sm120_ptx.o") {
    return object("k", {"-gencode", "arch=compute_120,code=[sm_120,compute_120]"}, name);
  }
  if (name == "compressed.o") {
    return object("k",
                  {"-gencode", "arch=compute_80,code=[sm_80,compute_80]", "-gencode", "arch=compute_120,code=sm_120",
                   "-Xfatbin", "-compress-all"},
                  name);
  }
  if (name == "sm100f.o") return object("k", {"-gencode", "arch=compute_100f,code=sm_100f"}, name);
  if (name == "rdc.o") {
    return object(
        "k", {"-rdc=true", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=compute_90"},
        name);
  }
  if (name == "rdc_exe") {
    TF_TRY(rdc, compile(k, {"-c", "-rdc=true", "-gencode", "arch=compute_80,code=sm_80"}, "k_rdc80.o"));
    const std::string main_source = "__global__ void k(float* x);\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n";
    TF_TRY(main_object,
           compile(main_source, {"-c", "-rdc=true", "-gencode", "arch=compute_80,code=sm_80"}, "main_rdc80.o"));
    std::string key = "rdc-exe\n" + rdc.string() + "\n" + main_object.string();
    return cached(key, name, [&](const fs::path& out) {
      return std::vector<std::string>{"-rdc=true",  "-gencode",           "arch=compute_80,code=sm_80",
                                      rdc.string(), main_object.string(), "-o",
                                      out.string()};
    });
  }
  if (name == "partial.so") {
    TF_TRY(a, object("ka", {"-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_120,code=sm_120"},
                     "ka.o"));
    TF_TRY(b, object("kb", {"-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_120,code=sm_120"},
                     "kb.o"));
    TF_TRY(c, object("kc", {"-gencode", "arch=compute_80,code=sm_80"}, "kc.o"));
    TF_TRY(d, object("kd", {"-gencode", "arch=compute_90,code=compute_90"}, "kd.o"));
    return link_shared({a, b, c, d}, name, Linker::host);
  }
  if (name == "stub.so") {
    TF_TRY(a, object("ka", {"-gencode", "arch=compute_80,code=sm_80"}, "ka80.o"));
    return link_shared({a}, name, Linker::nvcc);
  }
  if (name == "sm90a.cubin") return compile(k, {"-cubin", "-arch=sm_90a"}, name);
  if (name == "sm80.fatbin") {
    return compile(k, {"-fatbin", "-gencode", "arch=compute_80,code=[sm_80,compute_80]"}, name);
  }
  return fail("unknown fixture '" + name + "'");
}

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

void write_bytes(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TempDir::TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "torchfix";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  m_path = fs::temp_directory_path() / ("torchfix-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(m_path);
  fs::create_directories(m_path);
}

TempDir::~TempDir() {
  if (::testing::Test::HasFailure()) {
    std::fprintf(stderr, "kept temp dir of the failed test: %s\n", m_path.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

std::vector<std::string> groups_of(const binary::FileKernels& file) {
  std::vector<std::string> out;
  for (const ModuleGroup& group : binary::summarise(file).groups) {
    std::string line = std::to_string(group.modules) + ":";
    for (const Arch& arch : group.images) line += " " + arch.name();
    out.push_back(line);
  }
  return out;
}

}  // namespace torchfix::test
