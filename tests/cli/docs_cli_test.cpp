// docs/ against the real binary: every ```console block in docs/*.md is run
// in bash from the source tree (`$ torchfix ...` lines, output beneath, on
// snapshot fixtures so that it is the same on every machine) and must print
// what the page shows; blocks from real machines are fenced plainly and not
// replayed. And the README's Documentation list names every page.

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;

const fs::path k_source = TORCHFIX_SOURCE_DIR;

// One `$ command` of a page and what the page shows it printing.
struct Example {
  std::string where;  // docs/doctor.md:200
  std::string command;
  std::string shown;
};

// A command ending in a backslash goes on in the next line, as in a shell.
std::vector<Example> console_examples(const fs::path& page) {
  std::vector<Example> examples;
  std::istringstream text(read_file(page));
  bool in_console = false;
  bool continued = false;
  int number = 0;
  for (std::string line; std::getline(text, line);) {
    ++number;
    if (line.starts_with("```")) {
      in_console = !in_console && line == "```console";
      continue;
    }
    if (!in_console) continue;
    if (continued) {
      examples.back().command += "\n" + line;
    } else if (line.starts_with("$ ")) {
      examples.push_back({"docs/" + page.filename().string() + ":" + std::to_string(number), line.substr(2), ""});
    } else if (!examples.empty()) {
      examples.back().shown += line + "\n";
    }
    continued = (continued || line.starts_with("$ ")) && line.ends_with('\\');
  }
  return examples;
}

TEST(Docs, ConsoleExamplesPrintWhatTheBinaryPrints) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  TempDir home;
  const Environment env = {{"PATH", fs::path(TORCHFIX_BINARY).parent_path().string() + ":/usr/bin:/bin"},
                           {"HOME", home.path().string()},
                           {"NO_COLOR", "1"},
                           {"LC_ALL", "C.UTF-8"}};
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(k_source / "docs")) {
    if (entry.path().extension() != ".md") continue;
    for (const Example& example : console_examples(entry.path())) {
      SystemProcessRunner runner;
      // Both streams, as a terminal shows them, for every command of the line.
      Command command{
          "/bin/bash", {"-c", "{ " + example.command + "\n} 2>&1"}, env, k_source.string(), std::chrono::seconds(120)};
      auto r = runner.run(command);
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_EQ(r->out, example.shown) << example.where << ": `" << example.command << "` printed other text";
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 28) << "docs/ lost its ```console examples";
}

// Every page that shows what torchfix prints replays at least one example;
// these show output only from real machines or none at all.
TEST(Docs, EveryPageWithOutputReplaysAnExample) {
  const std::set<std::string> without_replay = {
      "ARCHITECTURE.md",    // the layers, no output
      "hostile-inputs.md",  // prose: what torchfix does with hostile bytes (tests/cli/hostile_*)
      "wheels.md",          // measurements of real wheels downloaded from PyPI
      "windows.md",         // Wine runs of the Windows build
  };
  for (const auto& entry : fs::directory_iterator(k_source / "docs")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".md" || without_replay.contains(name)) continue;
    EXPECT_FALSE(console_examples(entry.path()).empty())
        << "docs/" << name << " shows no ```console example that this test replays";
  }
}

TEST(Docs, TheReadmeNamesEveryPage) {
  const std::string readme = read_file(k_source / "README.md");
  const std::string list = readme.substr(readme.find("## Documentation"));
  for (const auto& entry : fs::directory_iterator(k_source / "docs")) {
    const std::string name = entry.path().filename().string() + (entry.is_directory() ? "/" : "");
    EXPECT_NE(list.find("`docs/" + name + "`"), std::string::npos) << "README's Documentation list lacks docs/" << name;
  }
}

}  // namespace
}  // namespace torchfix
