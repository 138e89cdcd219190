#pragma once
// The ELF numbers both ELF readers use (binary/elf.cpp without libelf,
// binary/elf_libelf.cpp with it): the System V gABI's (values as in glibc's
// <elf.h>, which Windows lacks) and CUDA's own. Internal to src/binary.

#include <cstddef>
#include <cstdint>
#include <span>

namespace torchfix::binary::elf_format {

constexpr int k_em_cuda = 190;
// Cubins with ELF ABI version >= 8 (CUDA 12.8+) keep the arch in e_flags bits
// 8..15; older ones in bits 0..7.
constexpr int k_cubin_abi_new = 8;
// .nv.compat holds attribute records: u8 format, u8 attribute, then a value.
// Formats (as in .nv.info): 1 no value, 2 byte, 3 half-word (both in a
// 4-byte record), 4 sized (u16 size, then the bytes). Attribute 9 = 1 marks an
// arch-specific (`a`) cubin (observed with nvcc 13.0 for sm_90a/sm_100a/sm_120a).
constexpr std::uint8_t k_compat_arch_specific = 9;
// Older cubins (ABI < 8) mark arch-specific code with EF_CUDA_ACCELERATORS.
constexpr std::uint32_t k_ef_cuda_accelerators = 0x800;
// .nv.compat is a few dozen bytes; read at most this much of it.
constexpr std::uint64_t k_compat_max = 4096;
// Section name tables are a few KB (libtorch_cuda.so: under 1 KB).
constexpr std::uint64_t k_names_max = 16u << 20;
// More sections than this is not a library anyone ships (libtorch_cuda.so: 40).
constexpr std::uint64_t k_sections_max = 1u << 20;

// gABI: e_ident indexes and values, section types and flags, special
// section indexes, dynamic tags.
constexpr int k_ei_class = 4;
constexpr int k_ei_data = 5;
constexpr int k_ei_abiversion = 8;
constexpr std::uint8_t k_elfclass32 = 1;
constexpr std::uint8_t k_elfclass64 = 2;
constexpr std::uint8_t k_elfdata2lsb = 1;
constexpr std::uint32_t k_sht_null = 0;
constexpr std::uint32_t k_sht_dynamic = 6;
constexpr std::uint32_t k_sht_dynsym = 11;
constexpr std::uint32_t k_sht_nobits = 8;
constexpr std::uint64_t k_shf_compressed = 0x800;
constexpr std::uint32_t k_shn_undef = 0;
constexpr std::uint32_t k_shn_xindex = 0xffff;
constexpr std::int64_t k_dt_null = 0;
constexpr std::int64_t k_dt_needed = 1;

/// Returns true when the .nv.compat records `compat` mark an arch-specific
/// (`a`) cubin; false for none, or for records it cannot parse.
bool compat_says_arch_specific(std::span<const std::byte> compat);

}  // namespace torchfix::binary::elf_format
