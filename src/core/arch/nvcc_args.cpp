#include "core/arch/nvcc_args.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace torchfix {
namespace {

constexpr std::array<std::string_view, 6> k_arch_flags = {"-gencode",           "--generate-code", "-arch",
                                                          "--gpu-architecture", "-code",           "--gpu-code"};

// Returns the flag name when `arg` is an arch flag ("-arch" or "-arch=..."), and
// whether its value is inside the same argument.
std::optional<std::pair<std::string_view, bool>> arch_flag(std::string_view arg) {
  for (std::string_view flag : k_arch_flags) {
    if (arg == flag) return std::pair{flag, false};
    if (arg.size() > flag.size() && arg.starts_with(flag) && arg[flag.size()] == '=') return std::pair{flag, true};
  }
  return std::nullopt;
}

bool single_image_output(const std::vector<std::string>& args) {
  return std::ranges::any_of(
      args, [](const std::string& a) { return a == "-ptx" || a == "--ptx" || a == "-cubin" || a == "--cubin"; });
}

// Sort key of an image name: its number, then the name.
std::pair<int, std::string> image_key(const std::string& name) {
  const auto digit = name.find_first_of("0123456789");
  int n = 0;
  for (std::size_t i = digit;
       i != std::string::npos && i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    n = n * 10 + (name[i] - '0');
  }
  return {digit == std::string::npos ? -1 : n, name};
}

}  // namespace

std::vector<std::string> images_named(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' || text[j] == '-')) {
      ++j;
    }
    std::string_view word = text.substr(i, j - i);
    for (std::string_view prefix : {"sm_", "compute_", "lto_"}) {
      if (word.starts_with(prefix) && word.size() > prefix.size() &&
          std::isdigit(static_cast<unsigned char>(word[prefix.size()]))) {
        out.emplace_back(word);
      }
    }
    if (word == "native" || word == "all" || word == "all-major") out.emplace_back(word);
    i = j == i ? i + 1 : j;
  }
  std::ranges::sort(out, [](const std::string& a, const std::string& b) { return image_key(a) < image_key(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

NvccRewrite rewrite_arch_flags(const std::vector<std::string>& args, const std::vector<std::string>& targets) {
  NvccRewrite r;
  if (single_image_output(args)) {
    r.args = args;
    return r;
  }
  std::string asked_text;
  bool inserted = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto flag = arch_flag(args[i]);
    if (!flag || (!flag->second && i + 1 == args.size())) {
      r.args.push_back(args[i]);
      continue;
    }
    std::string written = args[i];
    if (!flag->second) written += " " + args[++i];
    asked_text += written + " ";
    r.removed.push_back(std::move(written));
    if (!inserted) {
      r.args.insert(r.args.end(), targets.begin(), targets.end());
      inserted = true;
    }
  }
  r.asked = images_named(asked_text);
  return r;
}

NvccRewrite strip_arch_flags(std::string_view flags) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < flags.size()) {
    while (i < flags.size() && std::isspace(static_cast<unsigned char>(flags[i]))) ++i;
    std::size_t j = i;
    while (j < flags.size() && !std::isspace(static_cast<unsigned char>(flags[j]))) ++j;
    if (j > i) words.emplace_back(flags.substr(i, j - i));
    i = j;
  }
  return rewrite_arch_flags(words, {});
}

std::string summarise_images(const std::vector<std::string>& images) {
  std::string out;
  if (images.size() > 4) return images[0] + ", " + images[1] + ", ..., " + images.back();
  for (const std::string& i : images) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace torchfix
