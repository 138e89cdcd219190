# doctor --run for a CUDA extension torchfix knows no public op of: loads
# every CUDA module its shared libraries carry into the GPU's context, the way
# the CUDA runtime does before the first launch. A module with neither SASS
# for the GPU nor PTX the driver can compile fails with
# CUDA_ERROR_NO_BINARY_FOR_GPU (209), the error users see as "no kernel image
# is available for execution on the device".
#
# Facts: the fatbin container header (magic 0xBA55ED50, u16 version, u16
# header size, u64 payload size) as torchfix's own reader parses it
# (src/binary/fatbin.cpp); cuModuleLoadFatBinary and the CUresult values from
# the CUDA Driver API reference (cuda.h, CUDA 12.x/13.x).

import ctypes
import os
import struct

FATBIN_MAGIC = 0xBA55ED50
SECTION = b".nv_fatbin"  # loadable fatbins; __nv_relfatbin (-rdc) needs the device linker
MAX_LIBRARY_BYTES = 2 << 30
CU_ERRORS = {
    200: "CUDA_ERROR_INVALID_IMAGE",
    209: "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution on the device",
    218: "CUDA_ERROR_INVALID_PTX",
    221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
    222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the PTX is newer than this driver",
    224: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
}


def fatbin_section(path):
    """Returns the bytes of the .nv_fatbin section of the ELF file at path, or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None  # 64-bit little-endian ELF only (x86_64, aarch64)
        shoff, = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        size = os.fstat(f.fileno()).st_size
        if shentsize < 64 or shnum == 0 or shstrndx >= shnum or shoff + shnum * shentsize > size:
            return None
        f.seek(shoff)
        table = f.read(shnum * shentsize)
        sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
        _, _, _, _, str_off, str_size = sections[shstrndx]
        if str_off + str_size > size:
            return None
        f.seek(str_off)
        names = f.read(str_size)
        for name, kind, _, _, offset, length in sections:
            end = names.find(b"\0", name)
            if names[name:end] != SECTION or kind == 8 or offset + length > size or length > MAX_LIBRARY_BYTES:
                continue  # kind 8: SHT_NOBITS
            f.seek(offset)
            return f.read(length)
    return None


def containers(section):
    """Yields (offset, bytes) of each fatbin container in a .nv_fatbin section."""
    offset = 0
    while offset + 16 <= len(section):
        magic, _, header, payload = struct.unpack_from("<IHHQ", section, offset)
        if magic != FATBIN_MAGIC:
            offset += 8  # containers are 8-byte aligned; padding between them
            continue
        end = offset + header + payload
        if header < 16 or end > len(section):
            return
        yield offset, section[offset:end]
        offset = (end + 7) & ~7


def libraries(module):
    """Returns the shared libraries of an imported module: its file and those in its package folder."""
    found = []
    origin = getattr(module, "__file__", None) or ""
    roots = list(getattr(module, "__path__", []) or [])
    if origin.endswith(".so") or ".so." in origin:
        found.append(origin)
    for root in roots:
        for folder, _, files in os.walk(root):
            found.extend(os.path.join(folder, name) for name in files if name.endswith(".so") or ".so." in name)
    return sorted(set(found))


def load_modules(torch, device, module):
    """Loads every CUDA module of `module`'s libraries on `device`; returns (loaded, what, error)."""
    torch.cuda.init()
    torch.empty(1, device=device)  # makes torch's primary context current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuModuleLoadFatBinary.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
    cuda.cuModuleUnload.argtypes = [ctypes.c_void_p]
    count, names = 0, []
    for path in libraries(module):
        try:
            section = fatbin_section(path)
        except OSError:
            continue
        if not section:
            continue
        names.append(os.path.basename(path))
        for offset, image in containers(section):
            handle = ctypes.c_void_p()
            buffer = ctypes.create_string_buffer(image, len(image))
            status = cuda.cuModuleLoadFatBinary(ctypes.byref(handle), buffer)
            if status != 0:
                why = CU_ERRORS.get(status, "CUresult %d" % status)
                return False, "cuModuleLoadFatBinary", "%s (%s, fatbin at offset %d)" % (why, os.path.basename(path), offset)
            cuda.cuModuleUnload(handle)
            count += 1
    if count == 0:
        return None, "no CUDA module found in its libraries: import only", None
    return True, "loaded all %d CUDA modules of %s (cuModuleLoadFatBinary)" % (count, ", ".join(names)), None
