// Parsers of nvidia-smi, /proc and /sys output, on real samples. Each sample
// names where it was pasted; whitespace is kept as pasted.

#include "probe/gpu_parsers.hpp"
#include "probe/gpu_libraries.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace torchfix {
namespace {

const std::vector<std::string> k_probe_fields = {"index", "name", "compute_cap", "driver_version", "memory.total"};

// ---- nvidia-smi --query-gpu CSV ----

TEST(SmiCsv, TwoDifferentGpusWithHeaderAndOtherColumnOrder) {
  // Driver 570.86.15, TITAN V + RTX 5880 Ada, pasted in
  // https://github.com/triton-inference-server/server/pull/8070
  // ($ nvidia-smi --query-gpu=compute_cap,compute_mode,driver_version,name,index --format=csv)
  const std::string sample =
      "compute_cap, compute_mode, driver_version, name, index\n"
      "7.0, Default, 570.86.15, NVIDIA TITAN V, 0\n"
      "8.9, Default, 570.86.15, NVIDIA RTX 5880 Ada Generation, 1\n";
  auto rows = parse_smi_gpu_csv(sample, {"compute_cap", "compute_mode", "driver_version", "name", "index"});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].index, 0);
  EXPECT_EQ((*rows)[0].name, "NVIDIA TITAN V");
  EXPECT_EQ((*rows)[0].cc, (ComputeCapability{7, 0}));
  EXPECT_EQ((*rows)[0].driver->str(), "570.86.15");
  EXPECT_FALSE((*rows)[0].memory_bytes);
  EXPECT_EQ((*rows)[1].index, 1);
  EXPECT_EQ((*rows)[1].name, "NVIDIA RTX 5880 Ada Generation");
  EXPECT_EQ((*rows)[1].cc, (ComputeCapability{8, 9}));
}

TEST(SmiCsv, OldDriverNoHeaderNoUnitsWithNotAvailableField) {
  // Driver 440.64 (no compute_cap), GeForce RTX 2080, csv,noheader,nounits, pasted in
  // https://github.com/Ricks-Lab/gpu-utils/issues/83 ; temperature.memory is "N/A".
  const std::vector<std::string> fields = {"power.limit",
                                           "power.min_limit",
                                           "power.max_limit",
                                           "memory.total",
                                           "vbios_version",
                                           "driver_version",
                                           "name",
                                           "gpu_uuid",
                                           "power.draw",
                                           "temperature.gpu",
                                           "temperature.memory",
                                           "clocks.current.graphics",
                                           "clocks.sm",
                                           "clocks.mem",
                                           "utilization.gpu",
                                           "utilization.memory",
                                           "fan.speed",
                                           "pcie.link.width.current",
                                           "pstate"};
  const std::string sample =
      "200.00, 105.00, 292.00, 7979, 90.04.23.00.5F, 440.64, GeForce RTX 2080, "
      "GPU-22b2c6ac-2d49-4863-197c-9c469071178a, 176.98, 45, N/A, 1965, 1965, 7199, 86, 55, 100, 8, P2\n";
  auto rows = parse_smi_gpu_csv(sample, fields);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].index, 0);  // no index column: position
  EXPECT_EQ((*rows)[0].name, "GeForce RTX 2080");
  EXPECT_FALSE((*rows)[0].cc);
  EXPECT_EQ((*rows)[0].driver->str(), "440.64");
  EXPECT_EQ((*rows)[0].memory_bytes, 7979ull * 1024 * 1024);
}

TEST(SmiCsv, ProbeQueryLayoutSeveralGpusAndBracketedNotAvailable) {
  // The probe's own query, constructed (no pasted sample of exactly this
  // query was found): the H200 and driver of shared/GPU-MACHINE.md, the H100
  // total "81559MiB" reported in https://github.com/modal-labs/modal-client/pull/2797 ,
  // and "[N/A]", nvidia-smi's spelling of a field it cannot read.
  const std::string sample =
      "0, NVIDIA H200, 9.0, 580.159.04, 143771\n"
      "1, NVIDIA H100 80GB HBM3, 9.0, 580.159.04, 81559\n"
      "2, NVIDIA GB10, 12.1, 580.159.04, [N/A]\n";
  auto rows = parse_smi_gpu_csv(sample, k_probe_fields);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].memory_bytes, 81559ull * 1024 * 1024);
  EXPECT_EQ((*rows)[2].index, 2);
  EXPECT_EQ((*rows)[2].cc, (ComputeCapability{12, 1}));
  EXPECT_FALSE((*rows)[2].memory_bytes);
}

TEST(SmiCsv, UnitsInHeaderAndValuesWithoutNoUnits) {
  // --format=csv (no nounits) prints "memory.total [MiB]" and "81559 MiB".
  const std::string sample =
      "index, name, compute_cap, driver_version, memory.total [MiB]\n"
      "0, NVIDIA H100 80GB HBM3, 9.0, 570.133.07, 81559 MiB\n";
  auto rows = parse_smi_gpu_csv(sample, k_probe_fields);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].memory_bytes, 81559ull * 1024 * 1024);
}

TEST(SmiCsv, RejectsWrongFieldCountAndBadValues) {
  auto short_line = parse_smi_gpu_csv("0, NVIDIA H200, 9.0\n", k_probe_fields);
  ASSERT_FALSE(short_line);
  EXPECT_NE(short_line.error().message.find("0, NVIDIA H200, 9.0"), std::string::npos);
  EXPECT_NE(short_line.error().message.find("expected 5"), std::string::npos);

  EXPECT_FALSE(parse_smi_gpu_csv("x, NVIDIA H200, 9.0, 580.159.04, 143771\n", k_probe_fields));
  EXPECT_FALSE(parse_smi_gpu_csv("0, NVIDIA H200, nine, 580.159.04, 143771\n", k_probe_fields));
  EXPECT_FALSE(parse_smi_gpu_csv("\n\n", k_probe_fields));
}

TEST(SmiCsv, RecognisesTheOldDriverComputeCapError) {
  // Printed by nvidia-smi before 510 (exit status 2): quoted in
  // https://github.com/canonical/inference-snaps/issues/128 and, for
  // nvidia-smi v470.182.03, https://github.com/huggingface/candle/issues/733
  EXPECT_TRUE(smi_rejected_field("Field \"compute_cap\" is not a valid field to query.\n"));
  // https://github.com/ggml-org/llama.cpp/pull/22519 (a wrong field name on a new driver)
  EXPECT_TRUE(smi_rejected_field("Field \"id\" is not a valid field to query."));
  EXPECT_FALSE(smi_rejected_field(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
      "NVIDIA driver is installed and running."));
}

// ---- nvidia-smi table header ----

struct HeaderSample {
  const char* source;
  const char* text;
  const char* driver;  // "" when absent
  const char* cuda;    // "" when absent
};

// Names the sample in test output instead of dumping its bytes.
void PrintTo(const HeaderSample& sample, std::ostream* out) {
  *out << sample.source;
}

class SmiHeader : public ::testing::TestWithParam<HeaderSample> {};

TEST_P(SmiHeader, ReadsDriverAndCudaVersion) {
  const HeaderSample& sample = GetParam();
  SCOPED_TRACE(sample.source);
  auto driver = parse_smi_header_driver(sample.text);
  auto cuda = parse_smi_header_cuda(sample.text);
  EXPECT_EQ(driver ? driver->str() : "", sample.driver);
  EXPECT_EQ(cuda ? cuda->str() : "", sample.cuda);
}

INSTANTIATE_TEST_SUITE_P(
    RealOutputs, SmiHeader,
    ::testing::Values(
        HeaderSample{"https://github.com/cBio/cbio-cluster/issues/38 (331.62: no CUDA Version yet)",
                     "Fri Apr 18 12:26:18 2014       \n"
                     "+------------------------------------------------------+                       \n"
                     "| NVIDIA-SMI 331.62     Driver Version: 331.62         |                       \n"
                     "|-------------------------------+----------------------+----------------------+\n"
                     "|   0  GeForce GTX 680     Off  | 0000:03:00.0     N/A |                  N/A |\n",
                     "331.62", ""},
        HeaderSample{"https://github.com/openmm/openmm/issues/2386 (Tesla K80)",
                     "| NVIDIA-SMI 410.104      Driver Version: 410.104      CUDA Version: 10.0     |\n", "410.104",
                     "10.0"},
        HeaderSample{"https://github.com/rossumai/nvgpu/pull/15",
                     "Wed Jul 29 21:51:11 2020\n"
                     "+-----------------------------------------------------------------------------+\n"
                     "| NVIDIA-SMI 450.57       Driver Version: 450.57       CUDA Version: 11.0     |\n"
                     "|-------------------------------+----------------------+----------------------+\n"
                     "|   0  TITAN Xp            On   | 00000000:17:00.0 Off |                  N/A |\n"
                     "| 23%   39C    P8     9W / 250W |      7MiB / 12196MiB |      0%      Default |\n",
                     "450.57", "11.0"},
        HeaderSample{"mxochicale/code gpu/nvidia/LOGS.md (470)",
                     "| NVIDIA-SMI 470.63.01    Driver Version: 470.63.01    CUDA Version: 11.4     |\n", "470.63.01",
                     "11.4"},
        HeaderSample{"hershey890/cs259 README.md (WSL2: nvidia-smi 530.47, Windows driver 531.68)",
                     "| NVIDIA-SMI 530.47                 Driver Version: 531.68       CUDA Version: 12.1     |\n",
                     "531.68", "12.1"},
        HeaderSample{"https://github.com/Frogging-Family/nvidia-all/pull/212",
                     "Wed Jan 24 15:18:40 2024       \n"
                     "+-----------------------------------------------------------------------------------------+\n"
                     "| NVIDIA-SMI 550.40.07              Driver Version: 550.40.07      CUDA Version: 12.4     |\n"
                     "|-----------------------------------------+------------------------+----------------------+\n"
                     "|   0  NVIDIA GeForce RTX 4070        Off |   00000000:2D:00.0  On |                  N/A |\n"
                     "|  0%   36C    P5             17W /  200W |     430MiB /  12282MiB |      1%      Default |\n",
                     "550.40.07", "12.4"},
        HeaderSample{"https://github.com/canonical/inference-snaps/issues/128",
                     "+-----------------------------------------------------------------------------------------+\n"
                     "| NVIDIA-SMI 570.133.07             Driver Version: 570.133.07     CUDA Version: 12.8     |\n"
                     "|-----------------------------------------+------------------------+----------------------+\n",
                     "570.133.07", "12.8"},
        HeaderSample{"https://github.com/sgl-project/sglang/issues/27487 (R610 renamed the fields)",
                     "Sun Jun  7 08:16:57 2026\n"
                     "+-----------------------------------------------------------------------------------------+\n"
                     "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n"
                     "+-----------------------------------------+------------------------+----------------------+\n"
                     "|   0  NVIDIA B200                    On  |   00000000:63:00.0 Off |                    0 |\n",
                     "610.43.02", "13.3"},
        HeaderSample{"https://github.com/ci-for-research/self-hosted-runners/issues/40 (driver not loaded)",
                     "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
                     "the latest NVIDIA driver is installed and running.\n",
                     "", ""}));

// ---- /proc/driver/nvidia/version and /sys/module/nvidia/version ----

struct ProcSample {
  const char* source;
  const char* text;
  const char* version;
};

void PrintTo(const ProcSample& sample, std::ostream* out) {
  *out << sample.source;
}

class ProcDriverVersion : public ::testing::TestWithParam<ProcSample> {};

TEST_P(ProcDriverVersion, ReadsTheVersion) {
  const ProcSample& sample = GetParam();
  SCOPED_TRACE(sample.source);
  auto version = parse_proc_driver_version(sample.text);
  EXPECT_EQ(version ? version->str() : "", sample.version);
}

INSTANTIATE_TEST_SUITE_P(
    RealOutputs, ProcDriverVersion,
    ::testing::Values(
        ProcSample{"https://github.com/dylanaraps/neofetch/issues/876 (proprietary module)",
                   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n"
                   "GCC version:  gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3) \n",
                   "384.98"},
        ProcSample{"torchfix issue brief (proprietary 470 legacy module; the rest of the line elided there)",
                   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  \n", "470.256.02"},
        ProcSample{"https://github.com/nix-community/nixGL/issues/121 (open module, Arch)",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
                   "(archlinux-builder@localhost)  \n"
                   "GCC version:  gcc version 12.2.0 (GCC) \n",
                   "525.60.11"},
        ProcSample{"https://github.com/hyprwm/Hyprland/pull/6715 (two-part version, localised date)",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58  Release Build  "
                   "(portage@localhost)  \xd0\xa1\xd0\xb1 29 \xd0\xb8\xd1\x8e\xd0\xbd 2024 14:36:22 MSK\n",
                   "555.58"},
        ProcSample{"https://github.com/nix-community/nixGL/issues/186 (open module, Ubuntu 24.04)",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  "
                   "(dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n"
                   "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n",
                   "565.57.01"},
        ProcSample{"shared/facts/probes.md (the lent H200 machine; the rest of the line elided there)",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  \n",
                   "580.159.04"},
        ProcSample{"no NVRM line", "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n", ""}));

TEST(ModuleVersion, ReadsSysModuleVersion) {
  // /sys/module/nvidia/version holds the bare version and a newline (shared/facts/probes.md).
  EXPECT_EQ(parse_module_version("580.159.04\n")->str(), "580.159.04");
  EXPECT_FALSE(parse_module_version(""));
}

// ---- os-release, meminfo, cgroup ----

TEST(OsRelease, ReadsPrettyNameQuotedOrNot) {
  // Debian 12's /etc/os-release (this build machine), first lines.
  const std::string debian =
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
  EXPECT_EQ(parse_os_release_pretty_name(debian), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(parse_os_release_pretty_name("NAME=Arch\nPRETTY_NAME=Arch Linux\n"), "Arch Linux");
  EXPECT_EQ(parse_os_release_pretty_name("NAME=x\n"), "");
}

TEST(Meminfo, ReadsMemAvailableInBytes) {
  const std::string meminfo =
      "MemTotal:       32858572 kB\nMemFree:         1441188 kB\nMemAvailable:   23225312 kB\nBuffers: 0 kB\n";
  EXPECT_EQ(parse_meminfo_available(meminfo), 23225312ull * 1024);
  EXPECT_FALSE(parse_meminfo_available("MemTotal:       32858572 kB\n"));  // kernels before 3.14
}

TEST(Cgroup, NamesContainerRuntimes) {
  // Inside docker, cgroup v1: https://github.com/ctrsploit/ctrsploit/issues/280
  EXPECT_TRUE(cgroup_names_container(
      "12:net_cls,net_prio:/docker/2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d\n"
      "10:rdma:/\n"
      "0::/system.slice/containerd.service\n"));
  // Kubernetes on containerd: https://github.com/open-telemetry/opentelemetry-java/issues/4507
  EXPECT_TRUE(cgroup_names_container(
      "8:cpuset:/kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:cri-containerd:"
      "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459\n"));
  // A host: https://github.com/d2iq-archive/kubernetes-mesos/issues/565 ("from the host")
  EXPECT_FALSE(cgroup_names_container("12:name=systemd:/\n11:hugetlb:/\n4:memory:/\n1:cpuset:/\n"));
  EXPECT_FALSE(cgroup_names_container("0::/init.scope\n"));
}

// The kernel's /proc/self/mountinfo inside a bubblewrap namespace with a
// folder bind-mounted on "/opt/my venv" (tests/fixtures/mountinfo; one line
// of the capturing machine's own tooling removed).
TEST(Mountinfo, ReadsABindMountWithASpaceAndSkipsPseudoFilesystems) {
  const auto text = read_text_file(std::filesystem::path(TORCHFIX_SOURCE_DIR) /
                                   "tests/fixtures/mountinfo/bwrap-bind-opt-my-venv.txt");
  ASSERT_TRUE(text);
  const std::vector<Mount> mounts = parse_mountinfo(*text);
  ASSERT_FALSE(mounts.empty());
  EXPECT_EQ(mounts.front().point, "/");
  EXPECT_EQ(mounts.front().fs_type, "ext4");
  EXPECT_EQ(mounts.front().source, "/dev/vda");
  const auto venv = std::ranges::find(mounts, std::string("/opt/my venv"), &Mount::point);
  ASSERT_NE(venv, mounts.end());
  EXPECT_EQ(venv->root, "/tmp/h17d/vol");
  for (const Mount& m : mounts) {
    EXPECT_FALSE(m.point.starts_with("/proc") || m.point.starts_with("/sys") || m.point.starts_with("/dev")) << m.point;
  }
  EXPECT_TRUE(parse_mountinfo("garbage without the separator\n").empty());
}

// This process's own mount table: a real file of whatever machine runs the test.
TEST(Mountinfo, ReadsThisProcesssOwnMountTable) {
#ifdef _WIN32
  GTEST_SKIP() << "no /proc on Windows";
#else
  const auto text = read_text_file("/proc/self/mountinfo");
  if (!text) GTEST_SKIP() << "/proc/self/mountinfo cannot be read here";
  const std::vector<Mount> mounts = parse_mountinfo(*text);
  EXPECT_TRUE(std::ranges::any_of(mounts, [](const Mount& m) { return m.point == "/"; }));
  EXPECT_FALSE(std::ranges::any_of(mounts, [](const Mount& m) { return m.point == "/proc"; }));
#endif
}

TEST(SmiHeader, LongLinesAreParsedWithoutRecursion) {
  // std::regex recursed per character: a 30 KB line overflowed the stack.
  const std::string filler(30'000, ' ');
  EXPECT_EQ(parse_smi_header_cuda("CUDA Version:" + filler + "13.0")->str(), "13.0");
  EXPECT_FALSE(parse_smi_header_driver("Driver Version: " + std::string(30'000, '1') + ".1"))
      << "a number too long for an int is no version";
  EXPECT_FALSE(parse_smi_header_cuda(std::string(30'000, 'C')));
  EXPECT_FALSE(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module" + filler));
  EXPECT_EQ(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue\n")->str(),
            "580.159.04");
}

// ---- Jetson's /etc/nv_tegra_release, WSL's kernel release ----

TEST(NvTegraRelease, ReadsReleaseAndRevision) {
  // JetPack 6.2 on Orin (the first line as jetson-containers' l4t_version.py reads it).
  EXPECT_EQ(parse_nv_tegra_release("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, "
                                   "DATE: Wed Jan  8 01:49:37 UTC 2025\n"),
            "36.4.3");
  // Thor's JetPack 7.0 is R38; TX2's JetPack 4.5 is R32 (pokusew/ros-setup L4T.md).
  EXPECT_EQ(parse_nv_tegra_release("# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic\n"), "38.2.0");
  EXPECT_EQ(parse_nv_tegra_release("# R32 (release), REVISION: 5.1, GCID: 26202423, BOARD: t186ref, EABI: aarch64"),
            "32.5.1");
}

TEST(NvTegraRelease, GarbledOrEmptyIsUnknown) {
  EXPECT_FALSE(parse_nv_tegra_release(""));
  EXPECT_FALSE(parse_nv_tegra_release("\n# R36 (release), REVISION: 4.3\n"));  // the release is the first line
  EXPECT_FALSE(parse_nv_tegra_release("# R36 (release)\n"));
  EXPECT_FALSE(parse_nv_tegra_release("# Rxx (release), REVISION: 4.3\n"));
  EXPECT_FALSE(parse_nv_tegra_release("# R36 (release), REVISION: four\n"));
  EXPECT_FALSE(parse_nv_tegra_release("# R36 (release), REVISION: .\n"));
  EXPECT_FALSE(parse_nv_tegra_release(std::string(30'000, '#')));
}

TEST(OsreleaseWsl, KnowsWslKernels) {
  EXPECT_TRUE(osrelease_names_wsl("5.15.153.1-microsoft-standard-WSL2\n"));
  EXPECT_TRUE(osrelease_names_wsl("4.4.0-19041-Microsoft\n"));  // WSL 1
  EXPECT_TRUE(osrelease_names_wsl("6.6.36.6-WSL2-custom\n"));
  EXPECT_FALSE(osrelease_names_wsl("6.1.0-27-amd64\n"));
  EXPECT_FALSE(osrelease_names_wsl("5.15.148-tegra\n"));
  EXPECT_FALSE(osrelease_names_wsl(""));
}

}  // namespace
}  // namespace torchfix
