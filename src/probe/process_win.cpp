// probe/process.hpp on Windows (process.cpp, process_tree.cpp and
// process_stream.cpp are the POSIX side): children start suspended inside a
// job object, so that ending the job ends the whole tree, as killing the
// process group and its descendants does on Linux. Ctrl-C, Ctrl-Break and a
// closed console reach torchfix through SetConsoleCtrlHandler; while a run
// is active they end every registered job and are recorded (SIGINT's number,
// 2, or SIGHUP's, 1, for a closed console), as the POSIX handler does.
#include "probe/process_win.hpp"

#include <algorithm>
#include <atomic>
#include <cwctype>
#include <mutex>
#include <set>

namespace torchfix {
namespace win {
namespace {

std::mutex g_jobs_mutex;
std::set<HANDLE> g_jobs;  // jobs of the children running now
std::atomic<int> g_active{0};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};

BOOL WINAPI on_console_event(DWORD event) {
  if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT && event != CTRL_CLOSE_EVENT) return FALSE;
  if (g_active.load() == 0) return FALSE;  // the default action: torchfix ends
  g_signal.store(event == CTRL_CLOSE_EVENT ? 1 : 2);
  g_count.fetch_add(1);
  const std::lock_guard lock(g_jobs_mutex);
  for (HANDLE job : g_jobs) TerminateJobObject(job, 1);
  return TRUE;
}

// Quotes one argument so that the child's CommandLineToArgvW (and the MSVC
// and MinGW C runtimes) read it back unchanged: backslashes double only
// before a quote.
void append_quoted(std::wstring& line, const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    line.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(backslashes * 2, L'\\');
  line += L'"';
}

// The block CreateProcessW wants: NAME=value\0 ... \0, sorted by name
// without regard to case, as Windows keeps its own.
std::wstring environment_block(const Environment& env) {
  std::vector<std::wstring> entries;
  for (const auto& [name, value] : env) entries.push_back(widen(name) + L"=" + widen(value));
  std::sort(entries.begin(), entries.end(),
            [](const std::wstring& a, const std::wstring& b) { return _wcsicmp(a.c_str(), b.c_str()) < 0; });
  std::wstring block;
  for (const auto& entry : entries) block += entry + L'\0';
  block += L'\0';
  return block;
}

// A pipe whose write end the child inherits and whose read end it does not.
Expected<std::pair<HANDLE, HANDLE>> child_pipe() {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read = nullptr;
  HANDLE write = nullptr;
  if (!CreatePipe(&read, &write, &inherit, 1 << 16)) return fail(error_text("CreatePipe", GetLastError()));
  SetHandleInformation(read, HANDLE_FLAG_INHERIT, 0);
  return std::pair{read, write};
}

Expected<HANDLE> kill_on_close_job() {
  HANDLE job = CreateJobObjectW(nullptr, nullptr);
  if (!job) return fail(error_text("CreateJobObjectW", GetLastError()));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
    const DWORD code = GetLastError();
    CloseHandle(job);
    return fail(error_text("SetInformationJobObject", code));
  }
  return job;
}

// Closes the handles a spawn made on every way out of it.
struct SpawnHandles {
  HANDLE nul = INVALID_HANDLE_VALUE;
  HANDLE out_write = nullptr;
  HANDLE err_write = nullptr;
  ~SpawnHandles() {
    for (HANDLE h : {nul, out_write, err_write}) {
      if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    }
  }
};

// CreateProcessW with only `inherit` handed to the child (a handle list:
// concurrent runs on other threads must not inherit each other's pipes).
Expected<PROCESS_INFORMATION> create_suspended(std::wstring line, const std::wstring& program, std::wstring& env,
                                               const std::wstring& folder, std::vector<HANDLE> inherit,
                                               HANDLE std_handles[3]) {
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<unsigned char> storage(size);
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  if (!InitializeProcThreadAttributeList(attributes, 1, 0, &size) ||
      !UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit.data(),
                                 inherit.size() * sizeof(HANDLE), nullptr, nullptr)) {
    return fail(error_text("the child's handle list", GetLastError()));
  }
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = std_handles[0];
  startup.StartupInfo.hStdOutput = std_handles[1];
  startup.StartupInfo.hStdError = std_handles[2];
  startup.lpAttributeList = attributes;
  PROCESS_INFORMATION info{};
  const DWORD flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT;
  const BOOL ok = CreateProcessW(program.c_str(), line.data(), nullptr, nullptr, TRUE, flags, env.data(),
                                 folder.empty() ? nullptr : folder.c_str(), &startup.StartupInfo, &info);
  const DWORD code = GetLastError();
  DeleteProcThreadAttributeList(attributes);
  if (!ok) return fail(error_text("CreateProcessW", code));
  return info;
}

// Says why `program` cannot start as a Windows program, or "" when it can:
// a batch file (.bat, .cmd: CreateProcessW hands it to cmd.exe) or a PE
// image, which starts with "MZ". Anything else (a Linux ELF program, a
// script) fails on Windows with ERROR_BAD_EXE_FORMAT, while Wine starts an
// ELF file as a Unix process outside any job, whose handle
// AssignProcessToJobObject then calls invalid: refusing it here gives both
// the same answer.
std::string not_windows_program(const std::wstring& program) {
  const auto dot = program.find_last_of(L'.');
  if (dot != std::wstring::npos && program.find_first_of(L"/\\", dot) == std::wstring::npos) {
    const std::wstring ext = program.substr(dot);
    if (_wcsicmp(ext.c_str(), L".bat") == 0 || _wcsicmp(ext.c_str(), L".cmd") == 0) return "";
  }
  HANDLE file = CreateFileW(program.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                            nullptr, OPEN_EXISTING, 0, nullptr);
  if (file == INVALID_HANDLE_VALUE) return "";  // CreateProcessW says why
  char magic[4] = {};
  DWORD n = 0;
  const BOOL read = ReadFile(file, magic, sizeof magic, &n, nullptr);
  CloseHandle(file);
  if (read && n >= 2 && magic[0] == 'M' && magic[1] == 'Z') return "";
  if (read && n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F') {
    return "not a Windows program (a Linux ELF file)";
  }
  return "not a Windows program (no PE header)";
}

}  // namespace

std::wstring widen(std::string_view text) {
  if (text.empty()) return {};
  const int n = MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), n);
  return out;
}

std::string narrow(std::wstring_view text) {
  if (text.empty()) return {};
  const int n =
      WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), n, nullptr, nullptr);
  return out;
}

std::string error_text(std::string_view what, DWORD code) {
  wchar_t text[512] = {};
  const DWORD n =
      FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, text, 512, nullptr);
  std::string message = narrow(std::wstring_view(text, n));
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == '.')) {
    message.pop_back();
  }
  if (message.empty()) message = "Windows error " + std::to_string(code);
  return std::string(what) + ": " + message;
}

Child::Child(Child&& other) noexcept
    : process(std::exchange(other.process, nullptr)),
      job(std::exchange(other.job, nullptr)),
      out(std::exchange(other.out, nullptr)),
      err(std::exchange(other.err, nullptr)) {}

Child::~Child() {
  if (job) {
    const std::lock_guard lock(g_jobs_mutex);
    g_jobs.erase(job);
  }
  for (HANDLE h : {out, err, process, job}) {
    if (h) CloseHandle(h);  // the job last: KILL_ON_JOB_CLOSE ends what is left
  }
  if (job) g_active.fetch_sub(1);
}

void Child::kill_tree() const {
  if (job) TerminateJobObject(job, 1);
}

Expected<Child> spawn_child(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                            const std::string& working_directory, Stderr stderr_mode) {
  install_interrupt_handlers();
  const std::wstring wide_program = widen(program);
  if (auto why = not_windows_program(wide_program); !why.empty()) return fail(why);
  Child child;
  SpawnHandles handles;
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  handles.nul =
      CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr);
  if (handles.nul == INVALID_HANDLE_VALUE) return fail(error_text("opening NUL", GetLastError()));
  TF_TRY(out_pipe, child_pipe());
  child.out = out_pipe.first;
  handles.out_write = out_pipe.second;
  if (stderr_mode == Stderr::separate) {
    TF_TRY(err_pipe, child_pipe());
    child.err = err_pipe.first;
    handles.err_write = err_pipe.second;
  }
  TF_TRY(job, kill_on_close_job());
  child.job = job;
  g_active.fetch_add(1);  // balanced in ~Child, now that job is set
  {
    const std::lock_guard lock(g_jobs_mutex);
    g_jobs.insert(job);
  }
  if (g_count.load() > 0) return fail("torchfix was interrupted (Ctrl-C); not starting " + program);

  std::wstring line;
  append_quoted(line, wide_program);
  for (const auto& arg : args) {
    line += L' ';
    append_quoted(line, widen(arg));
  }
  std::wstring block = environment_block(env);
  HANDLE err_write = handles.err_write ? handles.err_write : handles.out_write;
  HANDLE std_handles[3] = {handles.nul, handles.out_write, err_write};
  std::vector<HANDLE> inheritable = {handles.nul, handles.out_write};
  if (handles.err_write) inheritable.push_back(handles.err_write);
  TF_TRY(info, create_suspended(line, wide_program, block, widen(working_directory), inheritable, std_handles));
  child.process = info.hProcess;
  // In the job before its first instruction, so that its children are too.
  if (!AssignProcessToJobObject(child.job, info.hProcess)) {
    const DWORD code = GetLastError();
    TerminateProcess(info.hProcess, 1);
    CloseHandle(info.hThread);
    return fail(error_text("AssignProcessToJobObject", code));
  }
  ResumeThread(info.hThread);
  CloseHandle(info.hThread);
  return child;
}

int interrupt_count() {
  return g_count.load();
}

}  // namespace win

// Windows keeps names without regard to case; PATH is stored under that one
// spelling (Windows itself writes "Path"), so lookups by "PATH" find it.
Environment read_process_environment() {
  Environment env;
  wchar_t* block = GetEnvironmentStringsW();
  for (const wchar_t* entry = block; entry && *entry; entry += wcslen(entry) + 1) {
    const std::string text = win::narrow(entry);
    const auto eq = text.find('=', 1);  // "=C:=C:\\..." entries start with '='
    if (eq == std::string::npos || text[0] == '=') continue;
    std::string name = text.substr(0, eq);
    if (_stricmp(name.c_str(), "PATH") == 0) name = "PATH";
    env[name] = text.substr(eq + 1);
  }
  if (block) FreeEnvironmentStringsW(block);
  return env;
}

// A name with a folder part is taken as given (with PATHEXT's extensions
// tried when it has none); a bare name is searched in PATH's ';'-separated
// folders.
std::optional<std::string> find_program(const std::string& name, const Environment& env) {
  auto is_file = [](const std::string& path) {
    const DWORD attributes = GetFileAttributesW(win::widen(path).c_str());
    return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
  };
  std::vector<std::string> extensions = {""};
  const bool has_extension = name.find('.', name.find_last_of("/\\") + 1) != std::string::npos;
  if (!has_extension) {
    auto pathext = env.find("PATHEXT");
    std::string_view list = pathext != env.end() ? std::string_view(pathext->second) : ".COM;.EXE;.BAT;.CMD";
    for (std::size_t at = 0; at <= list.size();) {
      const auto semi = std::min(list.find(';', at), list.size());
      if (semi > at) extensions.emplace_back(list.substr(at, semi - at));
      at = semi + 1;
    }
  }
  auto first_of = [&](const std::string& base) -> std::optional<std::string> {
    for (const auto& ext : extensions) {
      if (is_file(base + ext)) return base + ext;
    }
    return std::nullopt;
  };
  if (name.find_first_of("/\\:") != std::string::npos) return first_of(name);
  auto path = env.find("PATH");
  if (path == env.end()) return std::nullopt;
  std::string_view dirs = path->second;
  for (std::size_t at = 0; at <= dirs.size();) {
    const auto semi = std::min(dirs.find(';', at), dirs.size());
    if (semi > at) {
      if (auto found = first_of(std::string(dirs.substr(at, semi - at)) + "\\" + name)) return found;
    }
    at = semi + 1;
  }
  return std::nullopt;
}

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] { SetConsoleCtrlHandler(win::on_console_event, TRUE); });
}

int interrupt_signal() {
  return win::g_signal.load();
}

void clear_interrupt() {
  win::g_signal.store(0);
  win::g_count.store(0);
}

InterruptDeferral::InterruptDeferral() {
  install_interrupt_handlers();
  win::g_active.fetch_add(1);
}

InterruptDeferral::~InterruptDeferral() {
  win::g_active.fetch_sub(1);
}

}  // namespace torchfix
