"""One typing for both backends: the simulator runs a kernel rewritten from its ``ast`` so
that every expression has the type the compiler's type inference gives it.

A plain Python run of a kernel computes with NumPy 2's promotion rules (``float32 * 0.1`` is
float32, ``int32 + int32`` overflows at 32 bits, ``math.sqrt`` is float64), where the compiled
kernel follows Numba's typing (float literals are float64, integer arithmetic is at least 64
bits, ``math.sqrt`` of a float32 is ``sqrtf``).  ``typed_function(pyfunc, argtypes)`` takes the
``TypedFunction`` of :func:`cujit.compiler.typecheck.typecheck` (``typemap`` per ast node,
``vartypes`` per local) and generates a Python function from the same ``ast`` in which:

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
import weakref

from .typedast import Rewriter
from ..config import config

__all__ = ["typed_function", "needs_threads", "cooperative"]

# What a kernel may do and still run its threads one after another as plain calls (no
# greenlets): every ``TypedFunction.info`` key that never waits for other threads.  Anything
# else (barriers, warp calls, keys this module does not know) keeps the greenlet schedule.
_NON_WAITING = frozenset((
    "index", "cast", "iter_tuple", "iter_array", "iter_multi", "const.array_like",
    "augassign", "device", "atomic", "reshape", "conjugate", "fill", "copy", "tuple_dyn",
    "sreg", "tuple_const", "tuple_slice", "field", "shared.array", "local.array", "grid",
    "gridsize", "min", "max", "abs", "round", "pow", "len", "range", "enumerate", "zip",
    "print", "npfloor", "npceil", "nptrunc", "threadfence", "threadfence_block",
    "threadfence_system", "popc", "brev", "clz", "ffs", "fma", "cbrt",
    "lanemask_lt", "int", "float", "bool", "complex", "libdevice"))   # activemask waits:
# see thread.py


# pyfunc -> {argtypes: generated function}
_cache = weakref.WeakKeyDictionary()


def _enabled():
    return config.SIM_TYPED


def typed_function(pyfunc, argtypes, kernel=True):
    """The function the simulator runs for ``pyfunc`` launched with cujit types
    ``argtypes`` (tuple): ``pyfunc`` rewritten to compute with the inferred types, compiled
    once per signature; ``pyfunc`` itself when ``CUJIT_SIM_TYPED=0`` or when the rewrite fails
    (a ``RuntimeWarning`` says why).  Typing errors propagate as the compiler's
    ``TypingError``/``CompileError``."""
    if not _enabled() or argtypes is None:
        return pyfunc
    per = _cache.get(pyfunc)
    if per is None:
        per = _cache[pyfunc] = {}
    key = (tuple(argtypes), kernel)
    fn = per.get(key)
    if fn is None:
        from ..compiler.typecheck import typecheck
        tf = typecheck(pyfunc, tuple(argtypes), kernel=kernel)
        try:
            fn = _build(tf, {})
        except Exception as e:      # a bug of the rewriter must not stop a user's launch
            warnings.warn(f"cujit simulator: running {pyfunc.__qualname__} untyped "
                          f"({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
            fn = pyfunc
        per[key] = fn
    return fn


def needs_threads(fn):
    """False when ``fn`` (from :func:`typed_function`) is known to make no barrier or warp
    call, so its threads can run to completion one after another; True otherwise (also for
    a kernel running untyped)."""
    return getattr(fn, "_cj_waits", True)


def cooperative(fn):
    """True when ``fn`` (from :func:`typed_function`) calls ``cg.this_grid().sync()``,
    itself or in a device function it calls: the compiled kernel is launched cooperatively
    and the simulator runs all blocks together (:mod:`.grid`); False otherwise, also for a
    kernel running untyped."""
    return getattr(fn, "_cj_coop", False)


def _grid_syncs(tf):
    for f in tf.all_functions():
        for key_data in f.info.values():
            if isinstance(key_data, tuple) and key_data and key_data[0] == "cg.grid_sync":
                return True
    return False


def _waits(tf):
    for f in tf.all_functions():
        for key_data in f.info.values():
            key = key_data[0] if isinstance(key_data, tuple) and key_data else None
            if not isinstance(key, str):
                return True
            if key not in _NON_WAITING and not key.startswith(("math.", "atomic.")):
                return True
    return False


def _vector(tf, ns, done):
    """The kernel's whole-block vector function (:mod:`.vectorgen`), or None (per thread)."""
    if not tf.kernel:
        return None
    from .vectorgen import vector_function
    try:
        return vector_function(tf, ns, build=lambda callee: _build(callee, done))
    except Exception as e:      # a generator bug: the per-thread executor still runs it
        warnings.warn(f"cujit simulator: no vector executor for {tf.fsrc.qualname} "
                      f"({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
        return None


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


def _build(tf, done):
    """Generate and compile the typed function of ``tf`` (``done``: id(tf) -> function, for
    the device functions it calls)."""
    hit = done.get(id(tf))
    if hit is not None:
        return hit
    fsrc = tf.fsrc
    ns = dict(fsrc.globals)
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
    fn._cj_waits = _waits(tf)
    fn._cj_coop = _grid_syncs(tf)
    fn._cj_source = source      # the generated code, for diagnosing the simulator
    fn._cj_vector = _vector(tf, ns, done)
    done[id(tf)] = fn
    return fn
