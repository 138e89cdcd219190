// util/session.hpp on Windows: the parent's image name from a Toolhelp32
// snapshot of the processes, the Documents folder from the shell's known
// folders (never a guess from USERPROFILE: redirection and OneDrive move it).
#include <windows.h>
// After windows.h, which they need.
#include <knownfolders.h>
#include <shlobj.h>
#include <tlhelp32.h>

#include <cstdio>

#include "util/session.hpp"

namespace torchfix::util {
namespace {

std::string utf8(const wchar_t* text) {
  const int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
  if (n <= 1) return "";
  std::string out(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, -1, out.data(), n, nullptr, nullptr);
  out.pop_back();  // the terminating NUL
  return out;
}

}  // namespace

std::string parent_process_name() {
  HANDLE all = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (all == INVALID_HANDLE_VALUE) return "";
  // Two passes: this process's entry names the parent's id, whose entry
  // names its image. A parent that has exited is not in the snapshot ("").
  const DWORD self = GetCurrentProcessId();
  DWORD parent = 0;
  std::string name;
  PROCESSENTRY32W entry{};
  entry.dwSize = sizeof entry;
  for (BOOL more = Process32FirstW(all, &entry); more; more = Process32NextW(all, &entry)) {
    if (entry.th32ProcessID == self) parent = entry.th32ParentProcessID;
  }
  entry.dwSize = sizeof entry;
  for (BOOL more = Process32FirstW(all, &entry); more && parent != 0; more = Process32NextW(all, &entry)) {
    if (entry.th32ProcessID == parent) name = utf8(entry.szExeFile);
  }
  CloseHandle(all);
  return name;
}

Expected<std::filesystem::path> documents_folder() {
  PWSTR path = nullptr;
  const HRESULT hr = SHGetKnownFolderPath(FOLDERID_Documents, KF_FLAG_DEFAULT, nullptr, &path);
  if (FAILED(hr)) {
    CoTaskMemFree(path);
    char code[16];
    std::snprintf(code, sizeof code, "0x%08lx", static_cast<unsigned long>(hr));
    return fail(std::string("Windows does not know your Documents folder (SHGetKnownFolderPath: HRESULT ") + code +
                "); pass --rc $PROFILE");
  }
  std::filesystem::path documents(path);
  CoTaskMemFree(path);
  return documents;
}

}  // namespace torchfix::util
