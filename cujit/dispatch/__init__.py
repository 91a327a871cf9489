"""The kernel compiler: ``jit`` (kernels and device functions), and its errors.

Python source → typed IR → NVVM IR (``lowering``) → PTX (``nvvm``) → cubin (``linker``) →
launch (``dispatcher`` / ``launcher``).  Importing this package loads no toolchain.
"""
from ..frontend.errors import TypingError, CompileError
from .dispatcher import jit, compile_ptx, compile_ptx_for_current_device

__all__ = ["jit", "TypingError", "CompileError", "compile_ptx",
           "compile_ptx_for_current_device"]
