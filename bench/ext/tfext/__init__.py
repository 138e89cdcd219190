"""bench extension: tfext.op0 .. opN-1 compute x * a + i on the GPU."""
from . import _C  # noqa: F401
from ._C import *  # noqa: F401,F403
