#pragma once
// What-if mode: replace probed facts with values the user gives, so a user can
// ask before buying a GPU or upgrading a driver or torch, or ask about a
// machine they describe (platform, driver, torch, extensions, Python).

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Names the installer of a package that `--with PKG==VER` added without a
/// row in recipes/extensions.toml (no binaries: its archs are unknown).
inline constexpr std::string_view k_with_installer = "what-if --with";
/// Names the installer of a package a remedy rebuilt from source against the
/// installed torch (core/resolver/resolver_apply.cpp): no wheel's torch pin applies to it.
inline constexpr std::string_view k_rebuilt_installer = "source build (remedy)";

/// Holds the values given on the command line; empty ones change nothing.
struct WhatIf {
  std::vector<std::string> gpus{};       // --gpu: product name, sm_XY or X.Y (repeatable)
  std::optional<std::string> driver{};   // --driver: "570.124.04", or the CUDA it supports ("12.8")
  std::optional<std::string> torch{};    // --torch: "2.6.0+cu126", "2.9.1+cpu", "2.5.1+rocm6.2", or "2.6.0"
  std::optional<std::string> machine{};  // --platform: linux-x86_64, linux-aarch64, windows, wsl2 (x86_64, aarch64)
  std::vector<std::string> with{};       // --with: "flash-attn==2.7.4" (repeatable)
  std::optional<std::string> python_version{};  // --python-version: "3.12"
};

/// Says which facts of a what-if snapshot still come from this machine's
/// probes (toolkits, compilers, container state, packages not overridden):
/// one line, empty when the snapshot was not probed here or nothing was overridden.
std::string borrowed_facts(const Snapshot& snapshot, const WhatIf& what_if, bool probed_here);

/// Forgets what was read of the binaries and pins of the distributions
/// `names` in `env` (their torch pins, torch symbols, the CUDA runtime they
/// link): another release of them is installed, or they are rebuilt.
void forget_reads(PythonEnv& env, std::initializer_list<std::string_view> names);

/// Puts torch's companions installed in `env` (torchvision, torchaudio) at
/// their releases for torch `torch_release`, as installing that torch with
/// them from its index does (Knowledge::release_for_torch; no version where
/// the tables have none), and forgets what was read of the old ones.
void move_companions(PythonEnv& env, const Version& torch_release, const Knowledge& knowledge);

/// Applies `what_if` to `snapshot`:
/// --platform sets the machine (and WSL2 or Windows, whose driver is the
/// Windows host's); --gpu replaces the GPUs, each checked against the GPU
/// table (recipes/gpus.toml); --driver sets the driver version (R384 or newer)
/// and the CUDA it supports (recipes/toolkits.toml, Windows numbering on
/// Windows and WSL2), or a CUDA version (9.0 or newer); --torch replaces torch
/// in the first Python environment (or adds a "what-if" one) with its
/// companions at their releases for it (move_companions); without a
/// variant it takes that release's PyPI default for the platform
/// (recipes/torch-wheels.toml); --with adds an installed distribution at a
/// version, with the kernels its official wheel carries when the knowledge
/// holds them (recipes/extensions.toml); --python-version sets the Python.
/// Errors, one line each: an unknown or out-of-range GPU, a platform not in
/// the list, a driver older than R384, a value that is not a version, a torch
/// release without a known PyPI default, a --with that is not PKG==VER.
Expected<void> apply_what_if(Snapshot& snapshot, const WhatIf& what_if, const Knowledge& knowledge);

}  // namespace torchfix
