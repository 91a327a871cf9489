"""Helpers of the kernel-language data tests: compile a kernel to PTX (no GPU needed) and
build objects shaped like Numba's types (numba is not a test dependency)."""
import numpy as np

from cujit import types as T


def ptx_of(fn, *args, argtypes=None):
    """PTX of kernel ``fn`` typed for launch values ``args`` (or explicit ``argtypes``)."""
    from cujit.nvvm.lowering import compile_to_llvm
    from cujit.nvvm.libnvvm import compile_ptx
    ts = tuple(argtypes) if argtypes is not None else tuple(T.typeof(a) for a in args)
    lf = compile_to_llvm(fn, ts)
    return compile_ptx(lf.llvm_ir)


def _fake_class(name, module):
    return type(name, (), {"__module__": module,
                           "__repr__": lambda self: self.name, "__str__": lambda self: self.name})


_SCALAR = {}


def fake_numba_scalar(name):
    """An object like ``numba.float32`` (module ``numba.core.types.scalars``, ``.name``)."""
    kind = ("Integer" if "int" in name else "Float" if "float" in name else
            "Complex" if "complex" in name else "Boolean" if name == "bool" else "NoneType")
    if kind not in _SCALAR:
        cls = _fake_class(kind, "numba.core.types.scalars")
        cls.__call__ = lambda self, v: getattr(np, self.name)(v)   # Numba casts like NumPy
        _SCALAR[kind] = cls
    cls = _SCALAR[kind]
    obj = cls()
    obj.name = name
    return obj


def fake_numba_array(dtype, ndim, layout, mutable=True):
    """An object like ``numba.types.Array(dtype, ndim, layout)``."""
    obj = _fake_class("Array", "numba.core.types.npytypes")()
    obj.dtype, obj.ndim, obj.layout, obj.mutable = dtype, ndim, layout, mutable
    obj.name = f"array({dtype}, {ndim}d, {layout})"
    return obj


def fake_numba_signature(return_type, *args):
    """An object like ``numba.core.typing.templates.Signature``."""
    obj = _fake_class("Signature", "numba.core.typing.templates")()
    obj.return_type, obj.args = return_type, tuple(args)
    obj.name = "sig"
    return obj
