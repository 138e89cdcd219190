#pragma once
// The NGC PyTorch container as a fix: which image runs on this machine's GPUs
// and driver, the command NVIDIA recommends to start it, and the driver it
// needs. Pure: a function of the Situation and the knowledge tables.
//
// Rules (sources in recipes/ngc-pytorch.toml and shared/facts/ngc-containers.md):
// - an image covers a GPU when its torch has SASS for it (its arch list) and
//   its CUDA is at least the first CUDA that targets the GPU (cuBLAS/cuDNN of
//   an older CUDA have no kernels for it either);
// - the host driver must know the GPU's generation (the driver floor of the
//   first CUDA that targets it) and support the image's CUDA, or run it
//   through minor-version compatibility within its major (any GPU: the
//   Situation's cuda_on_driver, which the torch check reads too), or, on
//   data-centre GPUs and Jetson only, through forward compatibility; across
//   a major, GeForce and workstation cards get a driver fix instead of an
//   image whose entrypoint prints "compatibility mode is UNAVAILABLE".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/facts/ngc_table.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Says how an image reaches one GPU through the host driver.
enum class DriverPath {
  native,          // the driver supports the image's CUDA
  forward_compat,  // the image's cuda-compat package on an older branch (data centre, Jetson)
  minor_compat,    // minor-version compatibility within the CUDA major (any GPU)
  too_old,         // the driver cannot run it: a driver upgrade is needed
  unknown,         // the driver version is unknown
};

/// Says whether one image runs on one GPU, and why not.
struct NgcGpuFit {
  int gpu = 0;           // GPU index
  bool covered = false;  // torch in the image has SASS for it and its CUDA knows it
  DriverPath driver = DriverPath::unknown;
  std::string why;                             // one line: what decides it
  std::optional<Version> driver_needed;        // lowest driver that runs it natively, when the driver is too old
  const L4tRelease* jetpack_needed = nullptr;  // Tegra: the oldest tracked L4T release whose CUDA runs it
};

/// Holds the verdict on one image for this machine.
struct NgcVerdict {
  const NgcRelease* release = nullptr;
  std::string platform;  // "x86_64", "arm64-sbsa" or "igpu"
  std::string image;     // nvcr.io/nvidia/pytorch:25.01-py3
  std::string run_line;  // docker run ... as NVIDIA recommends
  bool runs = false;     // every GPU covered and the driver runs it
  std::vector<NgcGpuFit> gpus;
  std::optional<Version> driver_needed;        // the driver the image needs on this machine's GPUs, when known
  const L4tRelease* jetpack_needed = nullptr;  // Tegra: the L4T release it needs instead (no driver number)
  std::vector<std::string> notes;              // doubtful rows used, PTX, compat paths
};

/// Holds the container advice for a machine.
struct NgcAdvice {
  std::optional<NgcVerdict> image;        // newest image that runs with the driver in place
  std::optional<NgcVerdict> with_driver;  // newest image that covers every GPU, if a driver upgrade is needed for it
  std::optional<NgcVerdict> oldest;       // oldest image that covers every GPU: the lowest driver that unlocks one
  std::vector<std::string> reasons;       // why there is no image, one line each
};

/// Holds a parsed image reference.
struct NgcImageRef {
  std::string tag;       // "23.05"
  std::string platform;  // "igpu" for -py3-igpu, else "" (decided by the machine)
};

/// Describes one GPU as the image judge sees it.
struct NgcGpu {
  int index = 0;
  std::string label;                    // "GPU 0 (RTX 5070 Ti, 12.0)", used in the reasons
  std::optional<ComputeCapability> cc;  // nullopt: unknown, the GPU cannot be judged
  bool forward_compat = false;          // may use forward compatibility (forward_compat_allowed)
};

/// Holds what judging an image needs of a machine: its GPUs, the host's
/// driver in its platform's numbering (core/situation/situation.hpp: a Windows host
/// driver on WSL2 is read against Windows floors, a Tegra driver through its
/// L4T release, never against desktop floors), and the platform of the
/// images it pulls.
struct NgcHost {
  std::vector<NgcGpu> gpus;
  DriverState driver;  // the host's (a container uses the host's driver)
  DriverNumbering numbering = DriverNumbering::linux;
  std::string platform;  // "x86_64", "arm64-sbsa", "igpu"; "" when no NGC PyTorch image serves the machine
  std::string no_platform_reason = {};  // why platform is "", one line
};

/// Parses "nvcr.io/nvidia/pytorch:23.05-py3", "pytorch:23.05-py3-igpu" or
/// "23.05". Errors name the value and the expected form.
Expected<NgcImageRef> parse_ngc_image(std::string_view text);

/// Returns the platform whose NGC PyTorch images run on a machine, "" for
/// none (shared/facts/ngc-containers.md 1d): Tegra follows its L4T release,
/// never a driver number: R36 (JetPack 6) the -py3-igpu images, R38 and later
/// (JetPack 7 on Thor, 7.2 on Orin) the plain arm64 (SBSA) ones, R35 and older
/// (JetPack 4/5) none (their containers are l4t-pytorch); an unknown release
/// is judged by the GPU (Thor: SBSA, other Tegra parts: -igpu). Other aarch64
/// hosts "arm64-sbsa", native Windows "", else "x86_64". `why` (optional)
/// says why there is none.
std::string ngc_platform(PlatformKind platform, const std::optional<Version>& l4t,
                         const std::vector<ComputeCapability>& gpus, std::string* why = nullptr);

/// Returns the judge's view of a machine: its GPUs (labels with name and
/// capability, forward compatibility by name), its driver as the Situation
/// reads it, and `platform` (the machine's own, ngc_platform(), when empty).
NgcHost ngc_host(const Situation& situation, std::string_view platform = {});

/// Returns true when `gpu` may use forward compatibility (the cuda-compat
/// package; minor-version compatibility needs no such check):
/// Tegra (Jetson) parts and data-centre GPUs by name; GeForce, TITAN, Quadro
/// and RTX workstation cards (and unnamed GPUs) never.
/// Source: docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html.
bool forward_compat_allowed(const Gpu& gpu);

/// Returns the oldest tracked L4T release (recipes/drivers.toml [[l4t]])
/// whose CUDA has the major of `cuda`: Jetson runs newer minors of a major
/// through forward compatibility. nullptr when none is tracked.
const L4tRelease* oldest_l4t_for(const Knowledge& knowledge, const Version& cuda);

/// Returns the docker command NVIDIA recommends for `image`: --gpus all
/// (--runtime nvidia on Jetson), --ipc=host, --ulimit memlock=-1,
/// --ulimit stack=67108864, -it --rm (NGC entrypoint notice; NVIDIA DGX Spark playbooks).
std::string ngc_run_line(const std::string& image, bool jetson);

/// Returns a needed host driver as "570.86.15 (R570) or newer"; "a newer
/// driver" when the floor is not tracked (nullopt).
std::string ngc_driver_text(const std::optional<Version>& driver);
/// Returns what an image needs of the host: on Tegra a JetPack ("a JetPack
/// that ships CUDA 13.x (the oldest tracked: JetPack 7.0, Jetson Linux
/// R38.2)", recipes/drivers.toml [[l4t]]), elsewhere "driver " + ngc_driver_text()
/// or "a driver that supports CUDA X" when the floor is not tracked.
std::string ngc_needs_text(const std::optional<Version>& driver, const L4tRelease* jetpack, DriverNumbering numbering,
                           const Version& image_cuda);

/// Judges `release` on this machine's GPUs and driver (on `platform`, or the
/// machine's own when empty).
NgcVerdict judge_ngc_image(const Situation& situation, const Knowledge& knowledge, const NgcTable& table,
                           const NgcRelease& release, std::string_view platform = {});
/// Judges `release` on `host`'s GPUs and driver, on host.platform.
NgcVerdict judge_ngc_image(const NgcHost& host, const Knowledge& knowledge, const NgcTable& table,
                           const NgcRelease& release);

/// Chooses the newest image that runs on every GPU with the driver in place,
/// and the newest that would after a driver upgrade (only when that one is
/// newer or no image runs now). Never fails: with no GPUs or no table rows,
/// `reasons` says why there is no image.
NgcAdvice choose_ngc_image(const Situation& situation, const Knowledge& knowledge, const NgcTable& table);
/// Chooses as above for `host` (the resolver's container candidate uses this).
NgcAdvice choose_ngc_image(const NgcHost& host, const Knowledge& knowledge, const NgcTable& table);

/// Returns "native", "forward-compat", "minor-compat", "too-old", "unknown".
std::string_view to_string(DriverPath path);

}  // namespace torchfix
