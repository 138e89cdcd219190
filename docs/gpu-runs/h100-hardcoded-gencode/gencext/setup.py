# A minimal CUDA extension whose setup.py hard-codes its arch list: the
# -gencode flag in extra_compile_args makes torch.utils.cpp_extension leave
# TORCH_CUDA_ARCH_LIST out, so it builds sm_80 only whatever the list says.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="gencext",
    version="0.1.0",
    packages=["gencext"],
    ext_modules=[
        CUDAExtension(
            "gencext._C",
            ["csrc/add_one.cu"],
            extra_compile_args={"cxx": [], "nvcc": ["-gencode", "arch=compute_80,code=sm_80"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
