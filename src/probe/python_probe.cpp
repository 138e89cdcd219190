#include "probe/python_probe.hpp"

#include "probe/dll_probe.hpp"
#include "probe/gpu_libraries.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace torchfix {
namespace {

// Stage 1 prints one JSON line from files only (fast, cannot crash on CUDA);
// stage 2 imports torch and prints a second line. If the import kills the
// interpreter (SIGSEGV in a CUDA library, an abort) or hangs, stage 1 is
// still there to report what is installed.
// Distributions are read from the names of their .dist-info/.egg-info
// folders ("{name}-{version}.dist-info", the wheel spec's escaped form), not
// through importlib.metadata: importing it and parsing every METADATA took
// 80 of the 140 ms this probe cost on the H200 (docs/gpu-runs/README.md). The
// first folder on sys.path wins, as for imports.
constexpr const char* k_script = R"PY(
import json, os, re, sys, sysconfig
WANTED = {"torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "xformers", "flash-attn",
          "bitsandbytes", "vllm", "causal-conv1d", "mamba-ssm", "apex", "deepspeed",
          "transformer-engine", "cupy", "jax", "jaxlib", "onnxruntime-gpu", "tensorrt", "sglang", "sgl-kernel",
          "flashinfer-python", "gsplat"}
out = {"python_version": sys.version.split()[0], "prefix": sys.prefix,
       "site_packages": sysconfig.get_paths().get("purelib")}
dists = {}
def header_version(folder):
    for name in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.strip():
                        break
                    if line.startswith("Version:"):
                        return line[8:].strip()
        except OSError:
            pass
    return None
def editable_url(folder):
    try:
        with open(os.path.join(folder, "direct_url.json"), encoding="utf-8") as f:
            d = json.load(f)
        return d.get("url") if (d.get("dir_info") or {}).get("editable") else None
    except (OSError, ValueError, AttributeError):
        return None
editables = {}
try:
    for base in sys.path:
        try:
            entries = os.listdir(base or ".")
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".dist-info"):
                stem = entry[:-10]
            elif entry.endswith(".egg-info"):
                stem = entry[:-9].split("-py")[0]
            else:
                continue
            name, _, version = stem.partition("-")
            name = name.lower().replace("_", "-").replace(".", "-")
            if (name in WANTED or name.startswith("nvidia-")) and name not in dists:
                dists[name] = version or header_version(os.path.join(base, entry))
                url = editable_url(os.path.join(base, entry)) if name in WANTED else None
                if url:
                    editables[name] = url
except Exception as e:
    out["metadata_error"] = repr(e)
out["distributions"] = dists
out["editable_urls"] = editables
torch_dir = None
for base in sys.path:
    if base and os.path.isfile(os.path.join(base, "torch", "version.py")):
        torch_dir = os.path.join(base, "torch")
        break
if torch_dir:
    info = {"location": torch_dir}
    try:
        text = open(os.path.join(torch_dir, "version.py"), encoding="utf-8").read()
        for key in ("__version__", "cuda", "hip"):
            m = re.search(r"^%s\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)" % key, text, re.M)
            if m:
                info[key] = m.group(1) if m.group(1) is not None else m.group(2)
    except Exception as e:
        info["error"] = repr(e)
    out["torch_files"] = info
print(json.dumps(out), flush=True)
if torch_dir and len(sys.argv) > 1 and sys.argv[1] == "import":
    res = {}
    try:
        import torch
        res["version"] = torch.__version__
        res["cuda"] = torch.version.cuda
        res["hip"] = getattr(torch.version, "hip", None)
        res["location"] = os.path.dirname(torch.__file__)
        try:
            res["arch_flags"] = torch._C._cuda_getArchFlags() if hasattr(torch._C, "_cuda_getArchFlags") else ""
        except Exception as e:
            res["arch_flags_error"] = repr(e)
        try:
            res["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            res["cudnn"] = None
    except BaseException as e:
        res["import_error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps({"import": res}), flush=True)
)PY";

std::optional<std::string> json_string(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j.at(key).is_string()) return j.at(key).get<std::string>();
  return std::nullopt;
}

}  // namespace

const char* python_probe_script() {
  return k_script;
}

namespace {

// The folders uv and pipx keep their own environments in, as each documents
// (https://docs.astral.sh/uv/concepts/cache/, .../concepts/tools/,
// https://pipx.pypa.io/stable/installation/): the user never means them.
std::vector<std::string> throwaway_roots(const Environment& env) {
  const std::string home = env_value(env, "HOME");
  const std::string cache = env_value(env, "XDG_CACHE_HOME");
  const std::string data = env_value(env, "XDG_DATA_HOME");
  std::vector<std::string> roots = {env_value(env, "UV_CACHE_DIR"), env_value(env, "UV_TOOL_DIR"),
                                    env_value(env, "PIPX_HOME")};
  if (!cache.empty()) roots.push_back(cache + "/uv");
  if (!data.empty()) roots.insert(roots.end(), {data + "/uv/tools", data + "/pipx"});
  if (!home.empty()) {
    roots.insert(roots.end(), {home + "/.cache/uv", home + "/.local/share/uv/tools", home + "/.local/share/pipx",
                               home + "/.local/pipx"});
  }
  // Windows: the cache (docs.astral.sh/uv/reference/storage, "Cache
  // directory") and the tools folder a real `uv tool install` used
  // (astral-sh/uv#7008: C:\Users\USER\AppData\Roaming\uv\tools\ruff).
  const std::string local = env_value(env, "LOCALAPPDATA");
  const std::string roaming = env_value(env, "APPDATA");
  if (!local.empty()) roots.push_back(local + "\\uv\\cache");
  if (!roaming.empty()) roots.push_back(roaming + "\\uv\\tools");
  // pipx's Windows homes (pipx.pypa.io/latest/how-to/configure-paths/):
  // `~\pipx` by default, `%USERPROFILE%\AppData\Local\pipx` (older pipx's
  // platformdirs folder, `...\Local\pipx\pipx`) or `~\.local\pipx` when
  // one of those exists; each holds `venvs\` and `pipx run`'s `.cache\`.
  const std::string profile = env_value(env, "USERPROFILE");
  if (!local.empty()) roots.push_back(local + "\\pipx");
  if (!profile.empty()) roots.insert(roots.end(), {profile + "\\pipx", profile + "\\.local\\pipx"});
  std::erase(roots, std::string());
  return roots;
}

bool separator(char c) {
  return c == '/' || c == '\\';
}

// `path` is `root` or inside it; '/' and '\' both separate (Windows takes either).
bool under(const std::string& path, const std::string& root) {
  std::string r = root;
  while (r.size() > 1 && separator(r.back())) r.pop_back();
  return path == r || (path.size() > r.size() && path.starts_with(r) && separator(path[r.size()]));
}

// `path` holds a separator, the folder name `a`, a separator, then a name
// starting with `b`: uv's "/uv/archive-v" written with either separator.
bool has_parts(const std::string& path, std::string_view a, std::string_view b) {
  for (std::size_t at = path.find(a); at != std::string::npos; at = path.find(a, at + 1)) {
    const std::size_t after = at + a.size();
    if (at > 0 && separator(path[at - 1]) && after < path.size() && separator(path[after]) &&
        std::string_view(path).substr(after + 1).starts_with(b)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool throwaway_environment(const std::string& path, const Environment& env) {
  std::error_code ec;
  std::vector<std::string> forms = {std::filesystem::path(path).lexically_normal().string()};
  if (auto real = std::filesystem::weakly_canonical(path, ec); !ec) forms.push_back(real.string());
  for (const std::string& form : forms) {
    for (const std::string& root : throwaway_roots(env)) {
      if (under(form, root)) return true;
    }
    for (const char* part : {"archive-v", "builds-v", "environments-v"}) {
      if (has_parts(form, "uv", part)) return true;
    }
  }
  return false;
}

std::vector<std::string> parse_py_list(std::string_view out) {
  std::vector<std::string> found;
  const auto trim = [](std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return std::string_view();
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
  };
  for (std::size_t start = 0; start < out.size();) {
    const std::size_t end = std::min(out.find('\n', start), out.size());
    std::string_view line = trim(out.substr(start, end - start));
    start = end + 1;
    const std::size_t blank = line.find(' ');
    if (!line.starts_with('-') || blank == std::string_view::npos) continue;
    std::string_view rest = trim(line.substr(blank));
    if (rest.starts_with('*')) rest = trim(rest.substr(1));                  // the default, marked after its tag
    if (rest.ends_with(" *")) rest = trim(rest.substr(0, rest.size() - 2));  // or after the path
    if (rest.empty()) continue;
    std::string lower(rest);
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::size_t exe = lower.find(".exe");
    if (exe != std::string::npos && (exe + 4 == lower.size() || lower[exe + 4] == ' ')) {
      found.emplace_back(rest.substr(0, exe + 4));
    } else {
      found.push_back(std::string(rest) + "\\python.exe");
    }
  }
  return found;
}

std::vector<std::string> likely_site_packages_of(const std::string& interpreter) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  const auto add = [&out](const fs::path& dir) {
    std::error_code ec;
    if (fs::is_directory(dir, ec) && std::ranges::find(out, dir.string()) == out.end()) out.push_back(dir.string());
  };
  const fs::path folder = fs::path(interpreter).parent_path();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder.parent_path() / "lib", ec)) {
    if (entry.path().filename().string().starts_with("python3")) add(entry.path() / "site-packages");
  }
  // Windows keeps one Lib\site-packages beside python.exe, or above the
  // Scripts folder of a venv (the folder names as CPython's installer and
  // venv write them).
  add(folder / "Lib" / "site-packages");
  add(folder.parent_path() / "Lib" / "site-packages");
  return out;
}

PythonEnv python_env_from_probe(const std::string& interpreter, const std::string& origin, const ProcessResult& result,
                                TorchImport import) {
  PythonEnv env;
  env.interpreter = interpreter;
  env.origin = origin;
  std::vector<nlohmann::json> lines;
  std::istringstream out(result.out);
  std::string line;
  while (std::getline(out, line)) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) lines.push_back(std::move(parsed));
  }
  if (lines.empty()) {
    env.status = result.timed_out ? PythonStatus::timed_out : PythonStatus::not_runnable;
    // Say how it ended: "printed no probe result:" with nothing after it
    // told a user who typed --python /bin/false nothing.
    std::string how = result.signal ? "was killed by signal " + std::to_string(*result.signal)
                                    : "exited with code " + std::to_string(result.exit_code);
    std::string said = result.err.substr(0, 400);
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    env.error = result.timed_out ? "the probe did not finish in time"
                                 : how + " without printing the probe's result" +
                                       (said.empty() ? std::string(" (nothing on stderr)") : ": " + said) +
                                       "; is it a Python 3 interpreter?";
    return env;
  }
  const nlohmann::json& files = lines.front();
  env.python_version = json_string(files, "python_version");
  env.site_packages = json_string(files, "site_packages");
  if (files.contains("distributions") && files.at("distributions").is_object()) {
    for (const auto& [name, version] : files.at("distributions").items()) {
      if (version.is_string()) env.distributions[name] = version.get<std::string>();
    }
  }
  if (files.contains("editable_urls") && files.at("editable_urls").is_object()) {
    for (const auto& [name, url] : files.at("editable_urls").items()) {
      if (url.is_string()) env.editable_urls[name] = url.get<std::string>();
    }
  }
  if (!files.contains("torch_files")) {
    env.status = PythonStatus::no_torch;
    return env;
  }
  const nlohmann::json& tf = files.at("torch_files");
  TorchBuild torch;
  torch.version =
      json_string(tf, "__version__").value_or(env.distributions.contains("torch") ? env.distributions["torch"] : "");
  torch.cuda = json_string(tf, "cuda");
  torch.hip = json_string(tf, "hip");
  torch.location = json_string(tf, "location").value_or("");
  // When pip wrote torch: a container's image holds files older than the container.
  if (!torch.location.empty()) torch.installed_at = mtime_seconds(std::filesystem::path(torch.location) / "version.py");
  env.torch = torch;
  env.status = PythonStatus::ok;
  if (import == TorchImport::skip) return env;

  const nlohmann::json* imported = nullptr;
  if (lines.size() > 1 && lines[1].contains("import")) imported = &lines[1].at("import");
  if (!imported) {
    if (result.timed_out) {
      env.status = PythonStatus::timed_out;
      env.error = "`import torch` did not finish in " + std::to_string(static_cast<int>(result.seconds)) + " s";
    } else if (result.signal) {
      env.status = PythonStatus::crashed;
      env.error = "`import torch` killed the interpreter with signal " + std::to_string(*result.signal);
    } else {
      env.status = PythonStatus::crashed;
      env.error = "`import torch` ended the interpreter (exit code " + std::to_string(result.exit_code) +
                  "): " + result.err.substr(0, 400);
    }
    return env;
  }
  if (auto error = json_string(*imported, "import_error")) {
    env.status = PythonStatus::import_failed;
    env.error = *error;
    return env;
  }
  env.torch->version = json_string(*imported, "version").value_or(env.torch->version);
  env.torch->cuda = json_string(*imported, "cuda");
  env.torch->hip = json_string(*imported, "hip");
  env.torch->location = json_string(*imported, "location").value_or(env.torch->location);
  env.torch->arch_flags = parse_arch_flags(json_string(*imported, "arch_flags").value_or(""));
  if (imported->contains("cudnn") && imported->at("cudnn").is_number_integer()) {
    env.torch->cudnn = imported->at("cudnn").get<int>();
  }
  return env;
}

std::vector<PythonEnv> probe_pythons(const PythonProbeOptions& options, const Environment& env, ProcessRunner& runner,
                                     std::vector<ProbeNote>& notes) {
  std::vector<PythonEnv> pythons;
  std::set<std::string> prefixes;
  // Every interpreter at once (about 0.1 s each, 4 s with the import): the
  // results are then taken in discovery order, so the output does not depend
  // on which finished first.
  PythonProbeOptions found = options;
  if (options.interpreters.empty()) found.launcher = launcher_pythons(env, runner);
  const auto interpreters = discover_pythons(found, env);
  std::vector<std::future<Expected<ProcessResult>>> running;
  for (const auto& [interpreter, origin] : interpreters) {
    // -I would drop PYTHONPATH, which users rely on to find torch; -s and -E
    // are not used for the same reason: probe the environment as the user runs it.
    Command command{interpreter,
                    {"-c", k_script, options.import == TorchImport::run ? "import" : "noimport"},
                    env,
                    {},
                    options.timeout};
    running.push_back(std::async(std::launch::async, [&runner, command] { return runner.run(command); }));
  }
  for (std::size_t i = 0; i < interpreters.size(); ++i) {
    const auto& [interpreter, origin] = interpreters[i];
    auto result = running[i].get();
    if (!result) {
      PythonEnv failed;
      failed.interpreter = interpreter;
      failed.origin = origin;
      failed.status = PythonStatus::not_runnable;
      failed.error = result.error().message;
      notes.push_back({"python:" + interpreter, result.error().message});
      pythons.push_back(std::move(failed));
      continue;
    }
    // Deduplicate by sys.prefix: python3 on PATH is often the active venv's.
    auto first = nlohmann::json::parse(result->out.substr(0, result->out.find('\n')), nullptr, false);
    if (!first.is_discarded() && first.is_object() && first.contains("prefix")) {
      if (!prefixes.insert(first.at("prefix").dump()).second) continue;
    }
    pythons.push_back(python_env_from_probe(interpreter, origin, *result, options.import));
    PythonEnv& probed = pythons.back();
    if (probed.status == PythonStatus::import_failed) {
      probed.failed_dll = probe_failed_dll(probed.error, interpreter, probed.torch ? probed.torch->location : "", env);
    }
  }
  return pythons;
}

}  // namespace torchfix
