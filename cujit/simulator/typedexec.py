"""One typing for both backends: the simulator runs a kernel rewritten from its ``ast`` so
that every expression has the type the compiler's type inference gives it.

A plain Python run of a kernel computes with NumPy 2's promotion rules (``float32 * 0.1`` is
float32, ``int32 + int32`` overflows at 32 bits, ``math.sqrt`` is float64), where the compiled
kernel follows Numba's typing (float literals are float64, integer arithmetic is at least 64
bits, ``math.sqrt`` of a float32 is ``sqrtf``).  ``typed_kernel(pyfunc, tf)`` takes the
``TypedFunction`` of the front end (:mod:`cujit.frontend.typecheck`; ``typemap`` per ast node,
``vartypes`` per local) and generates a Python function from the same ``ast`` (returned in a
:class:`TypedKernel`, which the kernel's ``SimKernel`` keeps) in which:

- every numeric value is a value of its inferred type: a Python int within the type's range
  for integers (wrapped after arithmetic, so indices stay on the checked arrays' fast path),
  the NumPy scalar of the type for floats, complex numbers and booleans.  Literals and global
  constants are pre-converted, scalar parameters and every assignment to a local are
  converted to the local's one type, operands are converted to the operation's result type
  before it runs (so NumPy computes exactly the typed operation), stores convert to the
  element type;
- conversions, float ``//`` and ``%`` and ``math`` functions go through
  :mod:`.scalars`, which mirrors the lowering (wrap-around, saturating float → int, libdevice
  precision);
- device-function calls call the callee's own typed function.

Nodes of other types (arrays, tuples, records, kernel API calls) are copied unchanged, so
language features the rewriter does not know keep running as written.  NumPy's floating-point
and overflow warnings are silenced in simulated threads (the GPU has none).  The generated
function keeps the kernel's file name and line numbers, so reports and call-site identities
(barriers, shared arrays) are those of the user's source.  ``CUJIT_SIM_TYPED=0`` turns the
rewrite off (the kernel then runs as written).
"""
import ast
import warnings

from ..frontend.callkinds import Call, CallKind
from ..frontend.nodeinfo import (ArrayIndex, AugAssign, Iteration, RecordField, SliceStore,
                                 SpecialRegister, TupleDynamic, TupleItem, TupleSlice)
from .typedast import Rewriter
from ..config import config

__all__ = ["TypedKernel", "typed_kernel", "typed_function", "needs_threads", "cooperative"]

# What a kernel may do and still run its threads one after another as plain calls (no
# greenlets): every ``TypedFunction.info`` record and call kind that never waits for other
# threads.  Anything else (barriers, warp calls, records this module does not know) keeps
# the greenlet schedule.
_NON_WAITING = (ArrayIndex, Iteration, AugAssign, SliceStore, TupleDynamic, SpecialRegister,
                TupleItem, TupleSlice, RecordField)
_K = CallKind
_NON_WAITING_CALLS = frozenset((
    _K.CAST, _K.CONST_ARRAY, _K.DEVICE, _K.KERNEL, _K.ATOMIC, _K.RESHAPE, _K.CONJUGATE,
    _K.SHARED_ARRAY, _K.LOCAL_ARRAY, _K.GRID, _K.GRIDSIZE, _K.MIN, _K.MAX, _K.ABS, _K.ROUND,
    _K.POW, _K.LEN, _K.RANGE, _K.ENUMERATE, _K.ZIP, _K.PRINT, _K.NP_ROUNDING, _K.MATH,
    _K.MATH_PARTS, _K.THREADFENCE, _K.THREADFENCE_BLOCK, _K.THREADFENCE_SYSTEM, _K.POPC,
    _K.BREV, _K.CLZ, _K.FFS, _K.FMA, _K.CBRT, _K.LANEMASK_LT, _K.COMPLEX,
    _K.LIBDEVICE))   # activemask waits: see thread.py
del _K


def _enabled():
    return config.SIM_TYPED


class TypedKernel:
    """What the simulator runs for one kernel signature (kept by the kernel's
    :class:`~.kernel.SimKernel`, so it dies with the kernel): ``fn`` (the kernel rewritten to
    compute with the inferred types, or the Python function itself when running untyped),
    ``waits`` (False when it makes no barrier or warp call, so its threads can run one after
    another), ``cooperative`` (True when it calls ``cg.this_grid().sync()``, itself or in a
    device function), ``source`` (the generated code, for diagnosing the simulator, or None)
    ``vector`` (its whole-block :class:`~.vectorgen.VectorKernel`, or None: per thread),
    ``why_not`` (why there is none, for diagnosing, or None) and ``typing`` (the front end's
    ``TypedFunction`` it was generated from, or None)."""
    __slots__ = ("fn", "waits", "cooperative", "source", "vector", "why_not", "typing")

    def __init__(self, fn, waits=True, cooperative=False, source=None, vector=None,
                 why_not=None, typing=None):
        self.fn = fn
        self.why_not = why_not
        self.typing = typing
        self.waits = waits
        self.cooperative = cooperative
        self.source = source
        self.vector = vector

    def __repr__(self):
        return f"<TypedKernel {getattr(self.fn, '__qualname__', self.fn)!r}>"


def typed_kernel(pyfunc, tf):
    """The :class:`TypedKernel` of ``pyfunc`` typed as ``tf`` (a ``TypedFunction`` of the
    front end, or None to run untyped): ``pyfunc`` rewritten to compute with the inferred
    types; ``pyfunc`` itself when ``CUJIT_SIM_TYPED=0``, ``tf`` is None or the rewrite fails
    (a ``RuntimeWarning`` says why).  Nothing is cached here: the caller keeps it."""
    if not _enabled() or tf is None:
        return TypedKernel(pyfunc)
    try:
        return _typed_kernel(tf)
    except Exception as e:      # a bug of the rewriter must not stop a user's launch
        warnings.warn(f"cujit simulator: running {pyfunc.__qualname__} untyped "
                      f"({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
        return TypedKernel(pyfunc)


def typed_function(pyfunc, argtypes, kernel=True):
    """:func:`typed_kernel` of ``pyfunc`` typed for cujit types ``argtypes`` (tuple, or None
    to run untyped) by the front end's ``typecheck``.  Typing errors propagate as the
    compiler's ``TypingError``/``CompileError``."""
    if not _enabled() or argtypes is None:
        return TypedKernel(pyfunc)
    from ..frontend.typecheck import typecheck
    return typed_kernel(pyfunc, typecheck(pyfunc, tuple(argtypes), kernel=kernel))


def needs_threads(tk):
    """False when :class:`TypedKernel` ``tk`` is known to make no barrier or warp call, so
    its threads can run to completion one after another; True otherwise (also for a kernel
    running untyped)."""
    return tk.waits


def cooperative(tk):
    """True when :class:`TypedKernel` ``tk`` calls ``cg.this_grid().sync()``, itself or in a
    device function it calls: the compiled kernel is launched cooperatively and the simulator
    runs all blocks together (:mod:`.grid`); False otherwise, also for a kernel running
    untyped."""
    return tk.cooperative


def _grid_syncs(tf):
    for f in tf.all_functions():
        for record in f.info.values():
            if isinstance(record, Call) and record.kind is CallKind.GRID_SYNC:
                return True
    return False


def _waits(tf):
    for f in tf.all_functions():
        for record in f.info.values():
            if isinstance(record, Call):
                if record.kind not in _NON_WAITING_CALLS:
                    return True
                continue
            if not isinstance(record, _NON_WAITING):
                return True
    return False


def _vector(tf, ns, done):
    """``(VectorKernel or None, why not or None)``: the kernel's whole-block vector function
    (:mod:`.vectorgen`), or why it runs per thread."""
    if not tf.kernel:
        return None, None
    from .vectorgen import Unsupported, vector_function
    try:
        return vector_function(tf, ns, build=lambda callee: _build(callee, done)), None
    except Unsupported as e:
        return None, str(e)
    except Exception as e:      # a generator bug: the per-thread executor still runs it
        warnings.warn(f"cujit simulator: no vector executor for {tf.fsrc.qualname} "
                      f"({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
        return None, f"{type(e).__name__}: {e}"


def _frozen(value):
    """A read-only copy (a plain ndarray) of a NumPy array, mapped and managed ones included:
    the front end types every captured ``np.ndarray`` as a constant array
    (``const_types.const_type``); any other value (a device array is captured by address)
    itself."""
    import numpy as np
    if not isinstance(value, np.ndarray):
        return value
    copy = np.array(value, copy=True, subok=False)
    copy.flags.writeable = False
    return copy


def _kernel_names(fsrc):
    """The names the source of ``fsrc`` (its nested functions included) mentions: the module
    globals the typed function needs, and no other (a copy of the whole module namespace
    would keep every module global of the first launch alive with the kernel)."""
    names = {"__name__"}
    for n in ast.walk(fsrc.node):
        if isinstance(n, ast.Name):
            names.add(n.id)
    return names


def _build(tf, done):
    """The typed function of ``tf`` (``done``: id(tf) -> function, for the device functions
    it calls)."""
    return _compile(tf, done)[0]


def _compile(tf, done):
    """Generate and compile the typed function of ``tf`` → ``(function, generated source)``
    (``done``: id(tf) -> (function, source), for the device functions it calls)."""
    hit = done.get(id(tf))
    if hit is not None:
        return hit
    fsrc = tf.fsrc
    glb = fsrc.globals
    # the values the kernel reads, as of its first launch (numba: globals are compile-time
    # constants); only those, so dropping an unrelated module global frees it
    ns = {name: glb[name] for name in _kernel_names(fsrc) if name in glb}
    if "__builtins__" in glb:
        ns["__builtins__"] = glb["__builtins__"]
    ns.update(fsrc.closure)
    code = fsrc.pyfunc.__code__
    for name in code.co_names + code.co_freevars:
        # numba copies a captured host array into the module it compiles (constant
        # memory): host writes after the first launch do not reach the kernel
        if name in ns:
            ns[name] = _frozen(ns[name])
    from .builtins import KERNEL_BUILTINS
    for name, f in KERNEL_BUILTINS.items():    # builtins with the kernel's semantics
        ns.setdefault(name, f)
    rw = Rewriter(tf, ns, lambda callee: _build(callee, done))
    fdef = rw.function()
    mod = ast.Module(body=[fdef], type_ignores=[])
    ast.fix_missing_locations(mod)
    if fsrc.line_offset:
        ast.increment_lineno(mod, fsrc.line_offset)
    code = compile(mod, fsrc.filename, "exec")
    source = ast.unparse(mod)
    exec(code, ns)
    fn = ns[fdef.name]
    fn.__qualname__ = fsrc.qualname
    fn.__wrapped__ = fsrc.pyfunc
    done[id(tf)] = (fn, source)
    return fn, source


def _typed_kernel(tf):
    done = {}
    fn, source = _compile(tf, done)
    vector, why = _vector(tf, fn.__globals__, done)
    return TypedKernel(fn, _waits(tf), _grid_syncs(tf), source, vector, why, tf)
