// torchfix __complete, completions SHELL and man: what the shell scripts in
// templates/completion.* ask the binary, answered from the CLI11 tree, so
// that an option added to a command is completed without touching a script.

#include "cli/completion.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "cli/help_text.hpp"
#include "cli/tables.hpp"
#include "probe/data_dir.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

bool starts_with_ignoring_case(std::string_view word, std::string_view prefix) {
  if (prefix.size() > word.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), word.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

// Options of `cmd` and of the commands above it: `torchfix doctor -v` works
// because the root falls through.
const CLI::Option* find_option(const CLI::App& cmd, std::string_view word) {
  const std::string name(word.substr(0, word.find('=')));
  for (const CLI::App* app = &cmd; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* option = app->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

bool takes_value(const CLI::Option& option) {
  return option.get_type_size_max() > 0;
}

// The command the words name, and the option whose value is being typed
// (nullptr when the last word is not an option's value).
struct Place {
  const CLI::App* command = nullptr;
  const CLI::Option* value_of = nullptr;
  bool after_help = false;  // `torchfix help <TAB>` completes commands
};

Place locate(const CLI::App& app, const std::vector<std::string>& words) {
  Place place{&app, nullptr, false};
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& word = words[i];
    place.value_of = nullptr;
    if (word.starts_with('-')) {
      const CLI::Option* option = find_option(*place.command, word);
      if (option && takes_value(*option) && word.find('=') == std::string::npos) place.value_of = option;
      if (place.value_of && i + 2 < words.size()) {  // the value is given: skip it
        ++i;
        place.value_of = nullptr;
      }
      continue;
    }
    if (place.command != &app) continue;
    if (word == "help") place.after_help = true;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == word) place.command = sub;
    }
  }
  return place;
}

// "auto|always|never" names its choices; "NAME|X.Y", "FILE" and
// "fleet:DIR" are placeholders, not words to type.
std::vector<Completion> placeholder_choices(const CLI::Option& option) {
  std::vector<Completion> choices;
  const std::string names = option_placeholder(option);
  for (std::size_t start = 0; start <= names.size();) {
    std::size_t bar = names.find('|', start);
    if (bar == std::string::npos) bar = names.size();
    const std::string choice = names.substr(start, bar - start);
    const bool literal = !choice.empty() && std::ranges::none_of(choice, [](char c) {
      return std::isupper(static_cast<unsigned char>(c)) || c == ':' || c == '[';
    });
    if (literal) choices.push_back({choice, ""});
    start = bar + 1;
  }
  return choices;
}

std::vector<Completion> option_words(const CLI::App& cmd, std::string_view typed) {
  std::vector<Completion> words;
  for (const CLI::App* app = &cmd; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* option : app->get_options()) {
      if (!option->nonpositional()) continue;
      for (const std::string& l : option->get_lnames()) words.push_back({"--" + l, option->get_description()});
      if (typed.starts_with("--")) continue;
      for (const std::string& s : option->get_snames()) words.push_back({"-" + s, option->get_description()});
    }
  }
  return words;
}

// `torchfix completions <TAB>`: the choices a positional's placeholder
// names ("bash|zsh|fish"); PATH and RECIPE name none.
std::vector<Completion> positional_words(const CLI::App& cmd) {
  std::vector<Completion> words;
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->nonpositional()) continue;
    for (Completion& c : placeholder_choices(*option)) words.push_back({std::move(c.word), option->get_description()});
  }
  return words;
}

std::vector<Completion> command_words(const CLI::App& app) {
  std::vector<Completion> words;
  for (const CLI::App* sub : app.get_subcommands({})) words.push_back({sub->get_name(), sub->get_description()});
  words.push_back({"help", "Print the help of torchfix or of a command"});
  return words;
}

// The table's names and, for GeForce cards, the name as people say it
// ("RTX 5090"): the doctor ignores "NVIDIA" and "GeForce" either way.
std::vector<Completion> gpu_words(const std::vector<std::string>& gpu_names) {
  std::vector<Completion> words;
  for (const std::string& name : gpu_names) {
    words.push_back({name, "GPU"});
    if (name.starts_with("GeForce ")) words.push_back({name.substr(8), "GPU"});
  }
  return words;
}

std::vector<Completion> value_words(const CLI::Option& option, const std::vector<std::string>& gpu_names) {
  return option.check_name("--gpu") ? gpu_words(gpu_names) : placeholder_choices(option);
}

// "--gpu=RT": the values of --gpu that start with "RT", each written whole
// ("--gpu=RTX 5090"); nullopt when the word is no option taking a value.
std::optional<std::vector<Completion>> joined_value_words(const CLI::App& cmd, const std::string& typed,
                                                          const std::vector<std::string>& gpu_names) {
  const auto eq = typed.find('=');
  if (!typed.starts_with("--") || eq == std::string::npos) return std::nullopt;
  const CLI::Option* option = find_option(cmd, typed);
  if (option == nullptr || !takes_value(*option)) return std::nullopt;
  std::vector<Completion> out;
  for (Completion& c : value_words(*option, gpu_names)) {
    if (starts_with_ignoring_case(c.word, std::string_view(typed).substr(eq + 1))) {
      out.push_back({typed.substr(0, eq + 1) + c.word, std::move(c.description)});
    }
  }
  return out;
}

}  // namespace

std::vector<Completion> complete_words(const CLI::App& app, const std::vector<std::string>& words,
                                       const std::vector<std::string>& gpu_names) {
  const std::string typed = words.empty() ? std::string() : words.back();
  const Place place = locate(app, words);
  if (auto joined = joined_value_words(*place.command, typed, gpu_names)) return *joined;
  std::vector<Completion> all;
  if (place.value_of != nullptr) {
    all = value_words(*place.value_of, gpu_names);
  } else if (typed.starts_with('-')) {
    all = option_words(*place.command, typed);
  } else if (place.command == &app) {
    all = command_words(app);
    if (place.after_help) all.pop_back();
  } else {
    all = positional_words(*place.command);
  }
  std::vector<Completion> matching;
  for (Completion& c : all) {
    const bool seen = std::ranges::any_of(matching, [&](const Completion& m) { return m.word == c.word; });
    if (!seen && starts_with_ignoring_case(c.word, typed)) matching.push_back(std::move(c));
  }
  return matching;
}

int answer_completion(const CLI::App& app, const std::vector<std::string>& words, Context& ctx) {
  std::vector<std::string> gpu_names;
  const bool gpu_value = (words.size() >= 2 && words[words.size() - 2] == "--gpu") ||
                         (!words.empty() && words.back().starts_with("--gpu="));
  if (gpu_value) {
    auto inputs = load_inputs(ctx);
    if (!inputs) {
      ctx.err->line("torchfix __complete: " + inputs.error().message);
      return k_exit_tool_failure;
    }
    for (const GpuProduct& gpu : inputs->knowledge.gpus)
      gpu_names.insert(gpu_names.end(), gpu.names.begin(), gpu.names.end());
  }
  for (const Completion& c : complete_words(app, words, gpu_names)) ctx.out->line(c.word + "\t" + c.description);
  return k_exit_ok;
}

void add_completions(CLI::App& app, Context& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* completions = app.add_subcommand("completions", "Print the shell completion script for bash, zsh or fish");
  completions->add_option("shell", *shell, "The shell: bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}).description(""));
  completions->callback([shell, &ctx] {
    auto data = find_data(ctx.env);
    Expected<std::string> script = fail(data ? std::string() : data.error().message);
    if (data) {
      script = read_data_file(*data, "templates/completion." + *shell, data_file_limits("completion script"));
    }
    if (!script) {
      ctx.err->line("torchfix completions: " + script.error().message);
      ctx.exit_code = k_exit_tool_failure;
      return;
    }
    ctx.out->block(script->ends_with('\n') ? script->substr(0, script->size() - 1) : *script);
  });
  auto* man = app.add_subcommand("man", "Print the man page (roff): torchfix man | man -l -");
  man->callback([&app, &ctx] {
    const std::string page = man_page(app);
    ctx.out->block(page.substr(0, page.size() - 1));
  });
}

}  // namespace torchfix::cli
