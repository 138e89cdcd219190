/* A stand-in for a shell under Wine (tests/windows/wine_profile.sh): runs
 * the rest of its own command line as one child (CreateProcessW, handles
 * inherited) and exits with the child's exit code, 127 when it cannot start
 * it. Copied as pwsh.exe and powershell.exe, it is the parent process whose
 * image name torchfix reads; Wine's cmd.exe cannot be, as Wine answers a
 * file named powershell.exe with its own built-in stub. */
#include <windows.h>

int main(void) {
  wchar_t *rest = GetCommandLineW();
  if (*rest == L'"') {
    for (++rest; *rest && *rest != L'"'; ++rest) {
    }
    if (*rest) ++rest;
  } else {
    while (*rest && *rest != L' ' && *rest != L'\t') ++rest;
  }
  while (*rest == L' ' || *rest == L'\t') ++rest;
  STARTUPINFOW si = {sizeof si};
  PROCESS_INFORMATION pi;
  if (!CreateProcessW(NULL, rest, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) return 127;
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(pi.hProcess, &code);
  return (int)code;
}
