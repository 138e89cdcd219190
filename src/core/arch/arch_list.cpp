#include "core/arch/arch_list.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <tuple>

namespace torchfix {
namespace {

// One architecture name of select_compute_arch.cmake: the SASS it builds and
// the PTX it adds with +PTX (arch_bin / arch_ptx there; an empty ptx list
// means "the bins", as the cmake code falls back to arch_bin).
struct ArchName {
  std::string_view name;
  std::vector<int> bins;  // arch numbers (86 = 8.6)
  std::vector<int> ptx;
};

// PyTorch cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake,
// CUDA_SELECT_NVCC_ARCH_FLAGS (the names and their arch_bin/arch_ptx sets).
// Longest names first so that "Maxwell+Tegra" is not read as "Maxwell".
const std::array<ArchName, 14>& arch_names() {
  static const std::array<ArchName, 14> k_names = {{
      {"Kepler+Tesla", {37}, {}},
      {"Kepler", {35}, {35}},
      {"Maxwell+Tegra", {53}, {}},
      {"Maxwell", {50, 52}, {52}},
      {"Pascal", {60, 61}, {61}},
      {"Volta+Tegra", {72}, {}},
      {"Volta", {70}, {70}},
      {"Turing", {75}, {75}},
      {"Ampere+Tegra", {87}, {}},
      {"Ampere", {80, 86}, {80, 86}},
      {"Ada", {89}, {89}},
      {"Hopper", {90}, {90}},
      {"Blackwell+Tegra", {101}, {}},
      {"Blackwell", {100, 120}, {100, 120}},
  }};
  return k_names;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

constexpr std::string_view k_grammar_hint =
    "write compute capabilities like 8.6, 9.0a, 10.0f, 8.6(8.0) or 12.0+PTX, or a name like Ampere";

// Reads "X.Y" from the front of `text`, advancing it. Minor is one digit, as
// in select_compute_arch.cmake's regex ([0-9]+\.[0-9]).
std::optional<ComputeCapability> read_cc(std::string_view& text) {
  std::size_t i = 0;
  int major = 0;
  while (i < text.size() && is_digit(text[i]) && i < 3) major = major * 10 + (text[i++] - '0');
  if (i == 0 || i + 1 >= text.size() || text[i] != '.' || !is_digit(text[i + 1])) return std::nullopt;
  const int minor = text[i + 1] - '0';
  text.remove_prefix(i + 2);
  if (major < 1) return std::nullopt;
  return ComputeCapability{major, minor};
}

// Parses `body` (the entry without +PTX); messages quote the whole `entry`.
Expected<ArchTarget> parse_numeric(std::string_view body, std::string_view entry, bool ptx) {
  auto bad = [&](std::string_view why) {
    return fail("'" + std::string(entry) + "' is not a valid TORCH_CUDA_ARCH_LIST entry: " + std::string(why));
  };
  std::string_view rest = body;
  auto cc = read_cc(rest);
  if (!cc) return bad(k_grammar_hint);
  ArchTarget target{*cc, ArchVariant::generic, ptx, std::nullopt};
  if (!rest.empty() && (rest.front() == 'a' || rest.front() == 'f')) {
    target.variant = rest.front() == 'a' ? ArchVariant::specific : ArchVariant::family;
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest.front() == '(') {
    rest.remove_prefix(1);
    auto virt = read_cc(rest);
    if (!virt || rest != ")") return bad("the virtual arch in X.Y(X.Z) must be a compute capability, like 8.6(8.0)");
    target.virtual_cc = *virt;
    rest = {};
  }
  if (!rest.empty()) {
    if (is_digit(rest.front())) return bad("the minor version is one digit (12.0, not 1.20)");
    return bad(k_grammar_hint);
  }
  // Arch-specific (a) features start with Hopper, family (f) targets with
  // CUDA 12.9's Blackwell families (CUDA C++ Programming Guide, "Feature Availability").
  if (target.variant == ArchVariant::specific && target.cc < ComputeCapability{9, 0})
    return bad("arch-specific 'a' targets exist from 9.0 (sm_90a) on; drop the 'a'");
  if (target.variant == ArchVariant::family && target.cc < ComputeCapability{10, 0})
    return bad("family 'f' targets exist from 10.0 (sm_100f) on; drop the 'f'");
  if (target.virtual_cc) {
    if (target.variant != ArchVariant::generic)
      return bad("an 'a'/'f' target cannot name a separate virtual arch; write 9.0a or 8.6(8.0)");
    if (*target.virtual_cc > target.cc || target.virtual_cc->major != target.cc.major)
      return bad("in X.Y(X.Z) the PTX arch X.Z must be of the same major and not above X.Y, like 8.6(8.0)");
    if (*target.virtual_cc == target.cc) target.virtual_cc.reset();
  }
  return target;
}

Expected<std::vector<ArchTarget>> parse_entry(std::string_view entry) {
  bool ptx = false;
  std::string_view body = entry;
  if (body.size() > 4 && iequals(body.substr(body.size() - 4), "+PTX")) {
    ptx = true;
    body.remove_suffix(4);
  }
  for (std::string_view special : {"Auto", "All", "Common"}) {
    if (!iequals(body, special)) continue;
    if (special == "Auto") {
      return fail("'" + std::string(entry) +
                  "' in TORCH_CUDA_ARCH_LIST is refused: CMake's Auto probes the GPU at configure time and "
                  "silently falls back to a long common list; use --arch auto (every GPU of this machine, "
                  "resolved and shown in the plan), --arch native, or an explicit list like 8.6;12.0+PTX");
    }
    return fail("'" + std::string(entry) +
                "' in TORCH_CUDA_ARCH_LIST is refused: it compiles every arch the build knows (hours longer, "
                "and it can ask for archs the installed nvcc dropped); list the archs you need, like "
                "8.6;9.0+PTX, or use --arch auto for the GPUs of this machine");
  }
  for (const ArchName& name : arch_names()) {
    if (!iequals(body, name.name)) continue;
    std::vector<ArchTarget> out;
    const std::vector<int>& ptx_set = name.ptx.empty() ? name.bins : name.ptx;
    for (int bin : name.bins) {
      const bool with_ptx = ptx && std::ranges::find(ptx_set, bin) != ptx_set.end();
      out.push_back({ComputeCapability::from_number(bin), ArchVariant::generic, with_ptx, std::nullopt});
    }
    return out;
  }
  if (body.starts_with("sm_") || body.starts_with("compute_")) {
    auto cc = ComputeCapability::parse(body);
    std::string fix = cc ? "write " + cc->str() : std::string(k_grammar_hint);
    return fail("'" + std::string(entry) + "' is an nvcc arch name, not a TORCH_CUDA_ARCH_LIST entry: " + fix);
  }
  if (!body.empty() && !is_digit(body.front())) {
    return fail("'" + std::string(entry) +
                "' is not a known CUDA architecture name (select_compute_arch.cmake knows Kepler, Maxwell, "
                "Pascal, Volta, Turing, Ampere, Ada, Hopper, Blackwell, and +Tegra forms); " +
                std::string(k_grammar_hint));
  }
  TF_TRY(target, parse_numeric(body, entry, ptx));
  return std::vector<ArchTarget>{target};
}

std::string cc_text(ComputeCapability cc, ArchVariant variant) {
  std::string out = cc.str();
  if (variant == ArchVariant::specific) out += 'a';
  if (variant == ArchVariant::family) out += 'f';
  return out;
}

std::string number_text(ComputeCapability cc, ArchVariant variant) {
  std::string out = std::to_string(cc.number());
  if (variant == ArchVariant::specific) out += 'a';
  if (variant == ArchVariant::family) out += 'f';
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

// The PTX variant follows the target: compute_90a for 9.0a, compute_100f for 10.0f.
// A virtual arch X.Z of X.Y(X.Z) is always generic (parse refuses a/f there).
ArchVariant ptx_variant(const ArchTarget& target) {
  return target.virtual_cc ? ArchVariant::generic : target.variant;
}

}  // namespace

Expected<ArchList> parse_arch_list(std::string_view text) {
  ArchList list;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ';' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && text[end] != ';' && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    std::string_view entry = text.substr(i, end - i);
    if (entry.find(',') != std::string_view::npos) {
      return fail("'" + std::string(entry) +
                  "': TORCH_CUDA_ARCH_LIST entries are separated by ';' or spaces, not commas (8.6;9.0)");
    }
    TF_TRY(targets, parse_entry(entry));
    list.targets.insert(list.targets.end(), targets.begin(), targets.end());
    i = end;
  }
  if (list.targets.empty()) {
    return fail("the arch list '" + std::string(text) + "' is empty: " + std::string(k_grammar_hint) +
                ", or use --arch auto");
  }
  return normalise(std::move(list));
}

ArchList normalise(ArchList list) {
  auto key = [](const ArchTarget& t) { return std::tuple(t.cc, t.variant, t.virtual_cc); };
  std::ranges::sort(list.targets, [&](const ArchTarget& a, const ArchTarget& b) { return key(a) < key(b); });
  std::vector<ArchTarget> merged;
  for (const ArchTarget& target : list.targets) {
    if (!merged.empty() && key(merged.back()) == key(target)) {
      merged.back().ptx = merged.back().ptx || target.ptx;
    } else {
      merged.push_back(target);
    }
  }
  list.targets = std::move(merged);
  return list;
}

ArchList arch_list_for_gpus(const std::vector<ComputeCapability>& gpus, PtxPolicy policy) {
  ArchList list;
  for (ComputeCapability cc : gpus) {
    list.targets.push_back({cc, ArchVariant::generic, policy == PtxPolicy::all, std::nullopt});
  }
  list = normalise(std::move(list));
  if (policy == PtxPolicy::newest && !list.targets.empty()) list.targets.back().ptx = true;
  return list;
}

std::string render(const ArchList& list, ArchFormat format) {
  std::vector<std::string> parts;
  switch (format) {
    case ArchFormat::torch:
      for (const ArchTarget& t : list.targets) {
        std::string entry = cc_text(t.cc, t.variant);
        if (t.virtual_cc) entry += "(" + t.virtual_cc->str() + ")";
        if (t.ptx) entry += "+PTX";
        parts.push_back(std::move(entry));
      }
      return join(parts, ";");
    case ArchFormat::cmake:
      for (const ArchTarget& t : list.targets) {
        const std::string real = number_text(t.cc, t.variant);
        if (t.ptx && !t.virtual_cc) {
          parts.push_back(real);  // a plain number means SASS and PTX in CMake
        } else {
          parts.push_back(real + "-real");
          if (t.ptx) parts.push_back(number_text(*t.virtual_cc, ArchVariant::generic) + "-virtual");
        }
      }
      return join(parts, ";");
    case ArchFormat::gencode:
      return join(gencode_args(list), " ");
    case ArchFormat::flash_attn: {
      std::set<int> numbers;
      for (const ArchTarget& t : list.targets) numbers.insert(t.cc.number());
      for (int n : numbers) parts.push_back(std::to_string(n));
      return join(parts, ";");
    }
  }
  return {};
}

std::vector<std::string> gencode_args(const ArchList& list) {
  std::vector<std::string> args;
  // SASS first, then PTX, as select_compute_arch.cmake orders them.
  for (const ArchTarget& t : list.targets) {
    args.emplace_back("-gencode");
    args.push_back("arch=compute_" + number_text(t.ptx_cc(), ptx_variant(t)) + ",code=sm_" +
                   number_text(t.cc, t.variant));
  }
  for (const ArchTarget& t : list.targets) {
    if (!t.ptx) continue;
    const std::string virt = number_text(t.ptx_cc(), ptx_variant(t));
    args.emplace_back("-gencode");
    args.push_back("arch=compute_" + virt + ",code=compute_" + virt);
  }
  return args;
}

std::vector<Arch> images(const ArchList& list) {
  std::vector<Arch> out;
  for (const ArchTarget& t : list.targets) {
    out.push_back({ImageKind::sass, t.cc, t.variant});
    if (t.ptx) out.push_back({ImageKind::ptx, t.ptx_cc(), ptx_variant(t)});
  }
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<ComputeCapability> newest(const ArchList& list) {
  std::optional<ComputeCapability> best;
  for (const ArchTarget& t : list.targets) {
    if (!best || t.cc > *best) best = t.cc;
  }
  return best;
}

std::string_view to_string(PtxPolicy policy) {
  switch (policy) {
    case PtxPolicy::newest:
      return "newest";
    case PtxPolicy::none:
      return "none";
    case PtxPolicy::all:
      return "all";
  }
  return "newest";
}

Expected<PtxPolicy> parse_ptx_policy(std::string_view text) {
  for (PtxPolicy p : {PtxPolicy::newest, PtxPolicy::none, PtxPolicy::all}) {
    if (text == to_string(p)) return p;
  }
  return fail("'" + std::string(text) + "' is not a PTX policy: use newest, none or all");
}

}  // namespace torchfix
