#include "cli/usage.hpp"

#include <map>
#include <sstream>

#include "core/base/nearest.hpp"

namespace torchfix::cli {
namespace {

// Short flags other tools give a meaning torchfix spells out in full.
const std::map<std::string, std::string, std::less<>> k_conventional = {
    {"-V", "--version"}, {"-j", "--jobs"}, {"-o", "--output"}, {"-n", "--dry-run"}};

// CLI11 says "The following argument(s) was/were not expected: A B": the
// words after the colon, in the order given.
std::vector<std::string> extra_arguments(const std::string& what) {
  std::vector<std::string> words;
  const auto colon = what.find(": ");
  if (colon == std::string::npos) return words;
  std::istringstream rest(what.substr(colon + 2));
  for (std::string w; rest >> w;) words.push_back(w);
  return words;
}

}  // namespace

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* app = &cmd; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& l : option->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : option->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::string unknown_option_line(const std::string& command, const std::string& option, const CLI::App& cmd) {
  const std::string bare = option.substr(0, option.find('='));
  const std::vector<std::string> names = option_names(cmd);
  std::string meant;
  if (auto conventional = k_conventional.find(bare); conventional != k_conventional.end()) {
    if (std::ranges::find(names, conventional->second) != names.end()) meant = conventional->second;
  }
  if (meant.empty()) meant = nearest_word(bare, names);
  const std::string help = command + " --help";
  if (!meant.empty()) return command + ": unknown option '" + bare + "'; did you mean '" + meant + "'?";
  return command + ": unknown option '" + bare + "'; `" + help + "` lists the options";
}

std::string parse_error_line(const std::string& command, const CLI::ParseError& error, const CLI::App& cmd) {
  const std::string what = error.what();
  const std::string help = "`" + command + " --help` shows what it takes";
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    for (const std::string& word : extra_arguments(what)) {
      if (word.size() > 1 && word.starts_with('-')) return unknown_option_line(command, word, cmd);
    }
    const auto words = extra_arguments(what);
    const std::string first = words.empty() ? what : words.front();
    return command + ": unexpected argument '" + first + "'; " + help;
  }
  // "--gpu: 1 required TEXT missing": the option came last, without its value.
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr && what.ends_with("missing")) {
    return command + ": " + what.substr(0, what.find(':')) + " needs a value; " + help;
  }
  // CLI11's other messages name the option first ("--gpu: 1 required TEXT
  // missing"); torchfix's own checks already end with what to give.
  if (what.find("; ") != std::string::npos) return command + ": " + what;
  return command + ": " + what + "; " + help;
}

std::string unknown_command_line(const std::string& word, const CLI::App& app) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  commands.emplace_back("help");
  const std::string meant = nearest_word(word, commands);
  if (!meant.empty()) return "torchfix: unknown command '" + word + "'; did you mean '" + meant + "'?";
  return "torchfix: unknown command '" + word + "'; `torchfix --help` lists the commands";
}

}  // namespace torchfix::cli
