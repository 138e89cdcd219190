#pragma once
// The ptxas each Triton release bundles (recipes/triton-ptxas.toml), parsed
// from TOML text. Pure: text in, values out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"

namespace torchfix::shellenv {

/// Holds the bundled ptxas versions of Triton releases min..max (major.minor, inclusive).
struct TritonPtxas {
  Version min;
  Version max;
  Version ptxas;                           // bin/ptxas: archs below 10.0, or all without ptxas_blackwell
  std::optional<Version> ptxas_blackwell;  // bin/ptxas-blackwell: archs 10.0 and up (Triton 3.6+)
  std::string source;
};

/// Parses recipes/triton-ptxas.toml text; `file` prefixes errors. Errors name
/// the row and the field (every row needs min, max, ptxas and source).
Expected<std::vector<TritonPtxas>> parse_triton_ptxas(std::string_view text, std::string_view file);

/// Returns the row for a Triton version ("3.5.0+git7416ffcb"): the row that
/// covers its major.minor, the last row for newer versions, nullopt for
/// versions older than every row or unparsable text.
std::optional<TritonPtxas> triton_ptxas_for(const std::vector<TritonPtxas>& rows, std::string_view triton_version);

}  // namespace torchfix::shellenv
