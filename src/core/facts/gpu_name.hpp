#pragma once
// GPU names as people and tools write them ("NVIDIA H100 80GB HBM3" from
// nvidia-smi, "Tesla V100-SXM2-32GB" from NVML, "RTX 5090" from a user)
// matched to the products of recipes/gpus.toml.

#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/facts/knowledge.hpp"

namespace torchfix {

/// Returns the words of a GPU name that name the product: lower case, with
/// '-', '_', '(', ')' and ',' as spaces, without the vendor and brand words
/// (NVIDIA, GeForce, Tesla), memory sizes and kinds ("80GB", "HBM3",
/// "GDDR6X") and form-factor words ("SXM5", "PCIe", "NVL", "Generation",
/// "MIG 1g.10gb"), which nvidia-smi and NVML add to the product's name
/// (NVML's nvmlDeviceGetName; the cc is the product's, not the board's).
std::vector<std::string> gpu_name_words(std::string_view name);

/// Resolves a GPU name against `products`: equal product words first, then
/// the longest product name whose words the name contains ("Jetson Thor"
/// holds "Thor", "RTX 6000 Ada Generation" holds "RTX 6000 Ada"), then the
/// products whose names contain all its words ("5090" in "RTX 5090").
/// Errors: "unknown GPU 'X': did you mean 'Y' (cc)? ..." with the nearest
/// product by spelling ("5070ti", "rtx5090"), or without one when nothing is
/// near; "GPU name 'X' is ambiguous: ..." listing the candidates.
Expected<ComputeCapability> match_gpu_name(std::string_view spec, const std::vector<GpuProduct>& products);

}  // namespace torchfix
