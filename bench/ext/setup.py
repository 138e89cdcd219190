# A small torch CUDA extension for bench/gpu-build.sh: one binding file and
# KERNEL_FILES generated .cu files (default 8), each a few templated kernels
# dispatched over float, half and bfloat16, like real extensions.
import os
import pathlib

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = pathlib.Path(__file__).parent
COUNT = int(os.environ.get("KERNEL_FILES", "8"))
TEMPLATE = (HERE / "kernel.cu.in").read_text()
GEN = HERE / "tfext" / "gen"
GEN.mkdir(parents=True, exist_ok=True)
sources = ["tfext/bind.cpp"]
decls, defs = [], []
for i in range(COUNT):
    path = GEN / f"op{i}.cu"
    text = TEMPLATE.replace("@N@", str(i))
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    sources.append(f"tfext/gen/op{i}.cu")
    decls.append(f"torch::Tensor op{i}(torch::Tensor x, double a);")
    defs.append(f'  m.def("op{i}", &op{i}, "x * a + {i}");')
bind = "#include <torch/extension.h>\n" + "\n".join(decls) + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + "\n".join(defs) + "\n}\n"
bind_path = HERE / "tfext" / "bind.cpp"
if not bind_path.exists() or bind_path.read_text() != bind:
    bind_path.write_text(bind)

setup(
    name="tfext",
    version="0.1",
    ext_modules=[CUDAExtension("tfext._C", sources, extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2"]})],
    packages=["tfext"],
    cmdclass={"build_ext": BuildExtension},
)
