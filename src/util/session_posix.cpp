// util/session.hpp on Linux: the parent's name from /proc; no Documents
// known folder (PowerShell on Linux keeps its profile under ~/.config).
#include <unistd.h>

#include <fstream>

#include "util/session.hpp"

namespace torchfix::util {

std::string parent_process_name() {
  std::ifstream comm("/proc/" + std::to_string(::getppid()) + "/comm");
  std::string name;
  std::getline(comm, name);
  if (name.starts_with('-')) name.erase(0, 1);
  return name;
}

Expected<std::filesystem::path> documents_folder() {
  return fail("the Documents known folder exists on Windows only");
}

}  // namespace torchfix::util
