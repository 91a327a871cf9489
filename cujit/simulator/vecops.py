"""Array versions of :mod:`.scalars` for the block-vectorized executor (:mod:`.vectorgen`).

A thread-varying value is a 1-D NumPy array (one element per thread of the block) of the
NumPy dtype of its inferred type.  Every helper here gives, element by element, exactly what
the scalar helper of :mod:`.scalars` gives for one thread (the per-thread typed executor is
the reference, and it equals the compiled kernel):

- integer arrays wrap at their width natively (NumPy's integer ufuncs on same-dtype arrays);
- float → integer conversion truncates and saturates, NaN giving the value
  :func:`.scalars.caster` gives; int64/uint64 → float32/float16 round once, as the GPU's
  ``cvt.rn`` does (NumPy's array cast);
- integer ``//`` and ``%`` give 0 for a zero divisor: the vector executor calls
  :func:`.scalars.int_floordiv` / :func:`.scalars.int_mod` themselves (it never runs
  kernels compiled with ``debug=True``, where they raise);
- shifts by a count outside ``[0, bits)`` shift every bit out;
- float ``//`` and ``%``: the vector executor calls :func:`.scalars.float_floordiv` /
  :func:`.scalars.float_mod` themselves (one definition, for scalars and arrays);
- comparisons of int64 with uint64 compare exact values (NumPy would go through float64);
- ``math`` functions: only those whose array result is bit-identical to the scalar result
  (:data:`MATH_EXACT`, checked by tests/simulator/test_vector_ops.py) are vectorized; any
  other function is computed element by element with the scalar helper.
"""
import numpy as np

from .. import types as T
from . import scalars

__all__ = ["LANES", "vadd", "vmul", "vcaster", "vshl", "vshr", "vcompare", "vmath", "full",
           "MATH_EXACT"]

_vcasters = {}


class _Lanes:
    """The lane count of the running vector block (set by its runner), for all-false
    masks built from uniform conditions."""
    n = 0


LANES = _Lanes()


def _nan_pair(r, a, b):
    # NumPy's scalar add/multiply of two NaNs gives the second operand's payload, its
    # array loops the first one's: give the scalar's (the per-thread executor's) bits
    if r.dtype.kind == "f" and np.isnan(r).any():
        both = np.isnan(a) & np.isnan(b)
        if both.any():
            r = np.where(both, b * r.dtype.type(1), r)
    return r


def vadd(a, b):
    """Float ``a + b`` (same type; at least one a lane array), NaN payloads as the scalar
    path gives them."""
    return _nan_pair(np.add(a, b), a, b)


def vmul(a, b):
    """Float ``a * b``, NaN payloads as :func:`vadd`."""
    return _nan_pair(np.multiply(a, b), a, b)


def full(n, value, dtype):
    """A length-``n`` array of ``dtype`` holding the (already converted) uniform ``value``."""
    return np.full(n, value, dtype)


def _int_vcaster(t):
    lo, hi, nan_wide, nan_narrow = scalars.float_to_int_limits(t)
    dt = t.dtype

    def to_int(x):
        k = x.dtype.kind
        if k in "iub":
            return x if x.dtype == dt else x.astype(dt)
        nan = nan_narrow if x.dtype.itemsize < 8 else nan_wide
        isnan = x != x
        big = x >= hi
        small = x <= lo
        inner = ~(isnan | big | small)
        out = np.where(inner, x, 0).astype(dt)
        if not inner.all():
            out[big] = hi
            out[small] = lo
            out[isnan] = nan
        return out
    return to_int


def vcaster(t):
    """The array conversion to cujit scalar type ``t`` (Boolean, Integer, Float), mirroring
    :func:`.scalars.caster` element by element; TypeError for other types."""
    c = _vcasters.get(t)
    if c is None:
        if isinstance(t, T.Integer):
            c = _int_vcaster(t)
        elif isinstance(t, T.Boolean):
            def c(x):
                return x if x.dtype == np.bool_ else x != 0
        elif isinstance(t, T.Float):
            dt = t.dtype

            def c(x):
                return x if x.dtype == dt else x.astype(dt)
        else:
            raise TypeError(f"no array conversion to {t}")
        _vcasters[t] = c
    return c


def vshl(x, n, bits=64, dtype=None):
    """``x << n`` wrapped to the width of ``dtype`` (default: ``x``'s); 0 for a count
    outside ``[0, bits)`` (:func:`.scalars.int_shl`)."""
    x = np.asarray(x, dtype)
    n = np.asarray(n)
    ok = (n >= 0) & (n < bits)
    s = np.where(ok, n, 0).astype(x.dtype)
    r = np.left_shift(x, s)
    return np.where(ok, r, np.zeros_like(r))


def vshr(x, n, bits=64, dtype=None):
    """``x >> n``, arithmetic for signed ``x``; a count outside ``[0, bits)`` gives 0 or
    -1 (:func:`.scalars.int_shr`)."""
    x = np.asarray(x, dtype)
    n = np.asarray(n)
    ok = (n >= 0) & (n < bits)
    s = np.where(ok, n, 0).astype(x.dtype)
    r = np.right_shift(x, s)
    fill = np.zeros(r.shape, x.dtype)
    if x.dtype.kind == "i":
        fill[np.broadcast_to(x < 0, r.shape)] = -1
    return np.where(ok, r, fill)


_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


def vcompare(op, a, b):
    """``a <op> b`` by exact value (``op`` one of < <= > >= == !=); an int64 compared with a
    uint64 is compared exactly (NumPy would round both through float64)."""
    fn = _CMP[op]
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if da is not None and db is not None and {da.kind, db.kind} == {"i", "u"} and \
            max(da.itemsize, db.itemsize) == 8:
        # split: negative signed values are below every unsigned value
        sa = a if da.kind == "i" else b
        neg = sa < 0
        a2 = np.where(neg, 0, a).astype(np.uint64) if da.kind == "i" else a
        b2 = np.where(neg, 0, b).astype(np.uint64) if db.kind == "i" else b
        r = fn(a2.astype(np.uint64), b2.astype(np.uint64))
        signed_left = da.kind == "i"
        # a negative signed operand: left < right when the left one is negative
        neg_r = fn(-1, 0) if signed_left else fn(0, -1)
        return np.where(neg, neg_r, r)
    return fn(a, b)


# math functions whose NumPy array loop gives the scalar loop's bits for every input
# (IEEE-exact operations); others run element by element (SIMD loops of float32
# transcendental ufuncs can differ from the 0-d scalar in the last ulp).
MATH_EXACT = frozenset(("sqrt", "fabs", "copysign", "fmod", "npfloor", "npceil", "nptrunc",
                        "isnan", "isinf", "isfinite", "floor", "ceil", "trunc"))


def vmath(name, argtypes, rtype, exact=None):
    """The array version of :func:`.scalars.math_func` ``(name, argtypes, rtype)``: a function
    of arrays (or uniform scalars) giving one array; None when the scalar executor has no
    helper for it.  Functions outside ``exact`` (default :data:`MATH_EXACT`) run the scalar
    helper element by element, so their bits are the scalar's."""
    fn = scalars.math_func(name, argtypes, rtype)
    if fn is None:
        return None
    exact = MATH_EXACT if exact is None else exact
    out_dt = rtype.dtype
    n_args = len(argtypes)
    convs = [scalars.caster(t) for t in argtypes]
    vconvs = [vcaster(t) if isinstance(t, (T.Integer, T.Float, T.Boolean)) else None
              for t in argtypes]

    def elementwise(*args):
        n = max(len(a) for a in args if isinstance(a, np.ndarray))
        cols = [a.tolist() if isinstance(a, np.ndarray) and a.dtype.kind in "iub"
                else (list(a) if isinstance(a, np.ndarray) else [a] * n) for a in args]
        cols = [[c(v) for v in col] for c, col in zip(convs, cols)]
        return np.array([fn(*vs) for vs in zip(*cols)], dtype=out_dt)

    if name not in exact:
        return elementwise

    def vec(*args):
        # the scalar helper on arrays: same ufuncs, same argument conversions
        arrs = [vc(a) if isinstance(a, np.ndarray) and vc is not None else a
                for vc, a in zip(vconvs, args)]
        try:
            r = fn(*arrs)
        except (TypeError, ValueError):
            return elementwise(*args)
        r = np.asarray(r)
        if r.dtype != out_dt:
            r = vcaster(rtype)(r)
        return r
    vec.n_args = n_args
    return vec
