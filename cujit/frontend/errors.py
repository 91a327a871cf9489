"""Compile-time errors of kernels (R-KER-9): each names the file, line and column of the
offending source and shows that source line with a caret under the column.

``TypingError`` — the kernel is valid Python but cannot be typed (unsupported construct or
call, type mismatch, non-constant shared/local shape, bad dtype).  ``CompileError`` — the
toolchain (libNVVM, nvJitLink) rejected the generated code, or a resource limit (64 KiB of
constant memory) is exceeded.  Both subclass ``Exception`` directly (Numba's ``TypingError``
is not a ``TypeError`` either).

When the program has imported Numba itself (``numba.core.errors`` is in ``sys.modules``: a
library that uses both, numba-cuda's test suite), a ``TypingError`` is also an instance of
``numba.core.errors.TypingError`` (and ``RequireLiteralValue`` of Numba's class of that name),
so ``except numba.core.errors.TypingError`` catches cujit's refusals as it catches
numba-cuda's.  cujit never imports Numba for it: the class is read from ``sys.modules``.
"""
import sys

__all__ = ["CujitCompileError", "TypingError", "RequireLiteralValue", "UninferableType",
           "CompileError",
           "SourceLocation",
           "KernelRuntimeError", "NumbaWarning", "NumbaPerformanceWarning",
           "NumbaInvalidConfigWarning"]


class SourceLocation:
    """Where a construct is: ``filename`` (str), ``line`` (1-based), ``col`` (0-based, as
    ``ast``), ``source_line`` (the text of that line, or None when unknown)."""
    __slots__ = ("filename", "line", "col", "source_line")

    def __init__(self, filename, line, col=0, source_line=None):
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line

    def __repr__(self):
        return f"{self.filename}:{self.line}:{self.col + 1}"

    def render(self):
        """``File "f.py", line 3, column 5`` followed by the source line and a caret."""
        text = f'File "{self.filename}", line {self.line}, column {self.col + 1}'
        if self.source_line is not None:
            src = self.source_line.rstrip("\n")
            stripped = src.lstrip()
            indent = len(src) - len(stripped)
            caret = " " * max(self.col - indent, 0) + "^"
            text += f"\n    {stripped}\n    {caret}"
        return text


def _with_numba_class(cls):
    """``cls``, or when the program has imported Numba and ``cls.numba_name`` names a class
    of ``numba.core.errors`` that ``cls`` does not derive from, a subclass of both (named as
    ``cls``, made once per Numba class and kept on ``cls``)."""
    errors = sys.modules.get("numba.core.errors")
    if errors is None or cls.numba_name is None:
        return cls
    numba_cls = getattr(errors, cls.numba_name, None)
    if not isinstance(numba_cls, type) or not issubclass(numba_cls, Exception) \
            or issubclass(cls, numba_cls):
        return cls
    both = cls.__dict__.get("_with_numba")
    if both is None or both.__bases__[1] is not numba_cls:
        both = type(cls.__name__, (cls, numba_cls),
                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__doc__": cls.__doc__, "_cujit_class": cls})
        cls._with_numba = both
    return both


class CujitCompileError(Exception):
    """Base of kernel compile errors.  ``.msg`` (str), ``.loc`` (SourceLocation or None).

    ``numba_name``: the class of ``numba.core.errors`` this class is also an instance of
    when the program has imported Numba (None: none)."""

    numba_name = None

    def __new__(cls, *args, **kwargs):
        return super().__new__(_with_numba_class(cls), *args, **kwargs)

    def __init__(self, msg, loc=None):
        # Exception's own __init__, not Numba's NumbaError.__init__ next in a dual class's
        # MRO (it would replace .msg and .loc with the rendered text)
        Exception.__init__(self, msg if loc is None else f"{msg}\n{loc.render()}")
        self.msg = msg
        self.loc = loc

    def add_context(self, msg):
        """Append the line ``During: msg`` to the message (numba's ``add_context``: the
        calls that led to the error, innermost first); ``.msg`` stays the error itself.
        Returns ``self``."""
        self.args = (f"{self.args[0]}\nDuring: {msg}",) + self.args[1:]
        return self

    def __reduce__(self):
        # by cujit's class: a dual class is not importable by its name, and the receiving
        # process makes its own when it has imported Numba
        cls = type(self).__dict__.get("_cujit_class", type(self))
        return (cls.__new__, (cls, *self.args), self.__dict__)


class TypingError(CujitCompileError):
    """A kernel construct that cannot be typed or is not supported (Numba's TypingError)."""

    numba_name = "TypingError"


class UninferableType(TypingError):
    """A value whose type cannot be known when the kernel is compiled (a shared or local
    array whose dtype is not a compile-time constant).  Assigned to a variable, the message
    starts with numba's "Cannot infer the type of variable 'name'"."""


class RequireLiteralValue(TypingError):
    """An argument that must be a compile-time constant is not one (``cuda.grid(n)``,
    ``cuda.gridsize(n)`` with a variable ``n``): Numba's ``RequireLiteralValue``, a
    TypingError; the message starts with that name, as numba-cuda's does."""

    numba_name = "RequireLiteralValue"


class CompileError(CujitCompileError):
    """Code generation or the toolchain failed, or a resource limit is exceeded."""


class ToolchainError(CompileError):
    """libNVVM, llvmlite's NVPTX back end or nvJitLink rejected a module.  ``.log`` is the
    tool's log (appended to the message).  Raised as ``nvvm.NvvmError`` and
    ``linker.LinkerError``, two names of this class."""

    def __init__(self, msg, log=""):
        self.log = log
        super().__init__(f"{msg}\n{log}" if log else msg)


class NumbaWarning(Warning):
    """Base of the warnings cujit emits where numba-cuda emits its own (numba's names, which
    code filters on).  cujit's classes: with Numba installed they are not Numba's
    ``numba.core.errors`` classes (cujit never imports Numba)."""


class NumbaPerformanceWarning(NumbaWarning):
    """Code that runs correctly but slowly (numba-cuda's cases, on a GPU only): a launch
    grid of fewer than 128 blocks (``config.CUDA_LOW_OCCUPANCY_WARNINGS``) and a host NumPy
    array copied to the device and back by a launch (``config.CUDA_WARN_ON_IMPLICIT_COPY``);
    ``config.DISABLE_PERFORMANCE_WARNINGS`` silences both."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """A combination of ``jit()`` options that the CUDA toolchain does not support well:
    ``debug=True`` with optimisation on (numba-cuda's warning; pass ``opt=False``)."""


class KernelRuntimeError(RuntimeError):
    """numba.cuda's ``KernelRuntimeError(msg, tid=None, ctaid=None)``: ``.msg``, ``.tid`` and
    ``.ctaid`` (the thread and block index, or None), ``str()`` naming them as numba does.

    Neither cujit nor numba-cuda 0.30.4 raises it: an exception raised in a kernel reaches
    the host as its own class with numba's ``tid=[..] ctaid=[..]`` prefix (on the simulator;
    on a GPU with ``debug=True``).  It exists so that code naming it (``except
    cuda.KernelRuntimeError``) runs unchanged."""

    def __init__(self, msg, tid=None, ctaid=None):
        self.tid = tid
        self.ctaid = ctaid
        self.msg = msg
        super().__init__(f"An exception was raised in thread={tid} block={ctaid}\n\t{msg}")
