/* A program that prints a recorded output: the file beside it named like
 * itself with ".json" for ".exe" (vswhere.exe prints vswhere.json), to
 * stdout byte for byte, whatever its arguments; exit 0, or 1 without that
 * file. tests/windows/wine_layouts.sh installs it as vswhere.exe with the
 * vswhere output flutter recorded (tests/fixtures/windows/README.md), so
 * torchfix runs a real Windows program through its one process runner. */
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

int main(void) {
  char path[MAX_PATH + 8];
  DWORD n = GetModuleFileNameA(NULL, path, MAX_PATH);
  if (n == 0 || n >= MAX_PATH || n < 4 || _stricmp(path + n - 4, ".exe") != 0) return 1;
  strcpy(path + n - 4, ".json");
  FILE *in = fopen(path, "rb");
  if (!in) return 1;
  _setmode(_fileno(stdout), _O_BINARY); /* no "\n" to "\r\n" */
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, got, stdout);
  fclose(in);
  return 0;
}
