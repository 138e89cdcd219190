# A minimal CUDA extension (torch.utils.cpp_extension), built for the arch
# list TORCH_CUDA_ARCH_LIST gives and installed editable: docs/gpu-runs/h200-editable-extension.md.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="toyext",
    version="0.1.0",
    packages=["toyext"],
    ext_modules=[CUDAExtension("toyext._C", ["csrc/add_one.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
