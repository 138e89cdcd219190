#pragma once
// Shell completion and the man page, both read from the CLI11 command
// definitions that --help shows, so the three never disagree.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/context.hpp"

namespace torchfix::cli {

/// Holds one completion: the word, and what it is (fish and zsh show it).
struct Completion {
  std::string word;
  std::string description;
};

/// Returns the completions of the last of `words` (the words after
/// `torchfix`; the last is the one being typed and may be empty), read from
/// the command definitions under `app`: the commands, a command's options
/// and the global ones, the choices an option's placeholder names
/// (--color auto|always|never) and, after --gpu, `gpu_names`. Matching is
/// by prefix, ignoring case. A last word "--opt=PREFIX" completes the
/// option's values, each returned whole ("--gpu=RTX 5090"). Empty means:
/// let the shell complete file names.
std::vector<Completion> complete_words(const CLI::App& app, const std::vector<std::string>& words,
                                       const std::vector<std::string>& gpu_names);

/// Answers `torchfix __complete WORD...` (what the scripts in
/// templates/completion.* run): one completion a line, the word and its
/// description split by a tab. Reads the GPU table only after --gpu.
/// Returns the exit code: 0, or 2 when the tables cannot be read.
int answer_completion(const CLI::App& app, const std::vector<std::string>& words, Context& ctx);

/// Returns the man page of torchfix (roff, section 1) from the command
/// definitions under `app`: synopsis, each command with its options,
/// examples and environment variables, and the exit codes.
std::string man_page(const CLI::App& app);

/// Adds `torchfix completions bash|zsh|fish` (prints the script from the
/// data folder's templates/) and `torchfix man` (prints man_page) to `app`.
void add_completions(CLI::App& app, Context& ctx);

}  // namespace torchfix::cli
