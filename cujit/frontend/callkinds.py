"""The call contract between the typer and the backends: what each call of a kernel is.

The typer records, for every call it recognises, a :class:`Call` in
``TypedFunction.info[node]``: a :class:`CallKind` and that kind's typed payload (a frozen
dataclass, or None for kinds that need nothing beyond the argument types).  Each backend
(the NVVM lowering ``lower_calls``, the simulator's per-thread rewriter ``typedast`` and
its vector executor ``vecexpr``) owns a table keyed by :class:`CallKind` with one handler
per kind; ``tests/frontend/test_call_contract.py`` fails when a kind has no entry in one
of them.  Why an enum and not string keys: a misspelled key is an ``AttributeError`` at
import instead of a silently dead branch.
"""
import dataclasses
import enum

__all__ = ["CallKind", "Call", "Cast", "IsInstance", "Extremum", "MathFunc", "FP8Conversion", "ArraySpec", "ConstArray",
           "GridAxes", "ValueType", "Atomic", "Libdevice", "DeviceCall", "ClosureCall",
           "Reshape", "OverloadCall", "UserIntrinsic", "ExternCall", "WmmaFragment",
           "WmmaFill", "WmmaLoad", "WmmaMma", "WmmaStore", "WgmmaAccumulator", "WgmmaDescriptor",
           "WgmmaMma", "WgmmaWait", "WgmmaStore", "PipelineCopy", "PipelineWait", "VectorMake", "CacheHint", "UfuncCall",
           "PointerArray", "ArrayReduction", "ArrayView", "ArrayCopy", "PrintValue", "PrintFormat",
           "call_of", "resolve"]


# ---- payloads ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Cast:
    """A conversion to ``target`` (a cujit scalar type): ``np.float32(x)``, ``int(x)``."""
    target: object


@dataclasses.dataclass(frozen=True)
class IsInstance:
    """``isinstance(x, classinfo)``: its ``value`` (a bool), decided when the kernel is typed
    (``rules.isinstance_of``); the backends emit the constant."""
    value: bool


@dataclasses.dataclass(frozen=True)
class PrintValue:
    """One value a ``print`` passes to vprintf: of argument ``arg`` (its index), the element
    at ``path`` (tuple indices into nested tuples, ``()`` for the argument itself), of cujit
    type ``type``; ``register``: ``(name, axis)`` when it is a special register
    (``print(cuda.threadIdx)``), None otherwise."""
    arg: int
    path: tuple
    type: object
    register: object = None


@dataclasses.dataclass(frozen=True)
class PrintFormat:
    """``print(...)``: ``text``, the vprintf format (newline included; a string constant's
    ``%`` doubled) and ``values``, the :class:`PrintValue` of each ``%`` in it, in order (a
    complex value fills two, its parts).  ``raw``: more than 32 values, which vprintf cannot
    take: ``text`` is then the format itself, printed as written (numba-cuda's rule)."""
    text: str
    values: tuple
    raw: bool = False


@dataclasses.dataclass(frozen=True)
class Extremum:
    """``min``/``max``: of one tuple argument (``of_tuple``) or of several scalars.
    ``nan_ignoring``: two float32/float64 arguments, computed as libdevice's
    ``fmax``/``fmin`` (a NaN argument loses to a number; PTX ``max.f32``/``max.f64``), as
    numba-cuda lowers them (its ``cudaimpl``); other forms follow Python's rule (the first
    extreme argument wins, NaN included)."""
    of_tuple: bool
    nan_ignoring: bool = False


@dataclasses.dataclass(frozen=True)
class MathFunc:
    """A function of a maths family, by its name in that family (``'sin'`` of ``math``,
    ``'floor'`` of ``np.floor``, ``'rect'`` of ``cmath``, ``'hadd'`` of ``cuda.fp16`` or ``cuda.bf16``)."""
    name: str


@dataclasses.dataclass(frozen=True)
class FP8Conversion:
    """A ``cuda.fp8`` kernel conversion: the function's ``name``, and for the ``cvt_*``
    functions their compile-time arguments: ``saturate`` (``saturation_t.SATFINITE``),
    ``fmt`` (``'e4m3'`` / ``'e5m2'`` of ``fp8_interpretation_t``; ``''`` when there is none)
    and ``mode`` (``'rz'`` / ``'ru'`` of ``cudaRoundMode``; ``''`` when there is none)."""
    name: str
    saturate: bool = True
    fmt: str = ""
    mode: str = ""


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """``shared.array`` / ``local.array``: the constant shape (tuple of ints), the element
    type (a cujit type), whether it is dynamic shared memory (a 0 in the shape) and the
    ``alignment=`` asked for (bytes, a power of 2; None: the dtype's)."""
    shape: tuple
    dtype: object
    dynamic: bool
    alignment: object = None


@dataclasses.dataclass(frozen=True, eq=False)
class ConstArray:
    """``const.array_like(arr)``: the host NumPy array copied into constant memory."""
    value: object


@dataclasses.dataclass(frozen=True)
class GridAxes:
    """``grid(ndim)`` / ``gridsize(ndim)``: the number of axes (1, 2 or 3)."""
    ndim: int


@dataclasses.dataclass(frozen=True)
class ValueType:
    """A warp call's value type (``shfl_*``, ``match_*``) or ``mulhi``'s result type."""
    type: object


@dataclasses.dataclass(frozen=True)
class Atomic:
    """``cuda.atomic.<op>``: ``op`` is the operation (``'add'``, ``'cas'``; ``'cas0'`` is
    ``compare_and_swap``, which has no index argument)."""
    op: str


@dataclasses.dataclass(frozen=True, eq=False)
class Libdevice:
    """``cuda.libdevice.<name>``: the table's ``LibdeviceFunction`` (``name``, ``params``,
    ``result``)."""
    function: object


@dataclasses.dataclass(frozen=True, eq=False)
class DeviceCall:
    """A device-function call: the callee's ``TypedFunction`` and how each of its parameters
    is bound (``calls.device``: ``('arg', node, type)``, ``('const', value, type)``,
    ``('star', nodes, tuple type)``)."""
    callee: object
    bound: list


@dataclasses.dataclass(frozen=True, eq=False)
class ClosureCall:
    """A call of a ``def`` nested in the kernel: its ``TypedFunction`` and the names of the
    enclosing locals it reads (a tuple of str, passed as trailing parameters)."""
    function: object
    free: tuple


@dataclasses.dataclass(frozen=True)
class Reshape:
    """``arr.reshape(...)``: the number of dimensions of the result."""
    ndim: int


@dataclasses.dataclass(frozen=True, eq=False)
class OverloadCall:
    """A call of a function registered with ``cujit.extending.overload`` (or
    ``register_jitable``): the overloaded ``function``, the ``implementation`` (the Python
    function its typing function chose for these argument types) and ``call``, the
    :class:`DeviceCall` of that implementation (compiled as a device function)."""
    function: object
    implementation: object
    call: DeviceCall


@dataclasses.dataclass(frozen=True, eq=False)
class UserIntrinsic:
    """A call of a ``cujit.extending.intrinsic``: the ``intrinsic`` object, the
    ``signature`` its typing function gave (a cujit ``Signature``: ``return_type``, ``args``)
    and its ``codegen`` (``codegen(context, builder, signature, args)``, NVVM backend)."""
    intrinsic: object
    signature: object
    codegen: object


@dataclasses.dataclass(frozen=True)
class PointerArray:
    """``carray(ptr, shape, dtype)`` / ``farray``: an array over a pointer's memory, its
    ``order`` ('C' or 'F') and element type ``dtype`` (a cujit type)."""
    order: str
    dtype: object


@dataclasses.dataclass(frozen=True, eq=False)
class ExternCall:
    """A call of an external device function declared with ``cuda.declare_device``: the
    ``function`` (a ``declared.DeclaredFunction``: symbol ``name``, ``sig``, ``abi``,
    ``link``, ``sim``)."""
    function: object


@dataclasses.dataclass(frozen=True)
class ArrayView:
    """``arr.view(dtype)``: the array's bytes seen as elements of ``dtype`` (a cujit scalar
    type), as NumPy's ``ndarray.view``."""
    dtype: object


@dataclasses.dataclass(frozen=True, eq=False)
class ArrayCopy:
    """``arr.copy()`` of a captured NumPy array: its ``value`` (the NumPy array), whose C-order
    copy goes to the thread's local memory."""
    value: object


@dataclasses.dataclass(frozen=True, eq=False)
class ArrayReduction:
    """A NumPy reduction of a whole array (``np.sum(a)``, ``a.max()``): its ``name``
    (``'sum'``, ``'nanmin'``, ``'count_nonzero'`` …) and ``call``, the :class:`DeviceCall`
    of the function generated for the array's type (``frontend/calls/reduce.py``)."""
    name: str
    call: DeviceCall


@dataclasses.dataclass(frozen=True, eq=False)
class UfuncCall:
    """A NumPy ufunc called on arrays or with an output array (``np.sin(x, out)``), or one
    of the ufuncs typed only by their NumPy loop (``np.greater(a, b)``): the ``ufunc``, the
    NumPy ``loop`` chosen for the operands (``ufunc_loops.Loop``) and ``call``, the
    :class:`DeviceCall` of the loop function generated for these operand types (it runs
    the element-wise loop in the calling thread)."""
    ufunc: object
    loop: object
    call: DeviceCall


# ---- tensor cores (cujit.wmma) ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class WmmaFragment:
    """``wmma.fragment(...)``: the fragment type it makes (a ``types.Fragment``)."""
    fragment: object


@dataclasses.dataclass(frozen=True)
class WmmaFill:
    """``wmma.fill_fragment(frag, value)``: the fragment's type."""
    fragment: object


@dataclasses.dataclass(frozen=True)
class WmmaLoad:
    """``wmma.load_matrix_sync(frag, src, ldm[, layout])``: the fragment's type and the
    memory layout of the tile (``'row_major'``/``'col_major'``)."""
    fragment: object
    layout: str


@dataclasses.dataclass(frozen=True)
class WmmaMma:
    """``wmma.mma_sync(d, a, b, c)``: the types of ``a`` and ``b`` (their layouts and
    precision pick the instruction)."""
    a: object
    b: object


@dataclasses.dataclass(frozen=True)
class WmmaStore:
    """``wmma.store_matrix_sync(dst, frag, ldm, layout)``: the fragment's type and the
    memory layout of the tile."""
    fragment: object
    layout: str


# ---- warpgroup tensor-core MMA (cujit.wgmma, Hopper) ----------------------------------------
@dataclasses.dataclass(frozen=True)
class WgmmaAccumulator:
    """``wgmma.accumulator(m, n)`` / ``wgmma.fill_accumulator(acc, v)``: the accumulator's
    type (a ``types.WarpgroupAccumulator``)."""
    accumulator: object


@dataclasses.dataclass(frozen=True)
class WgmmaDescriptor:
    """``wgmma.make_descriptor(smem, offset, swizzle, lbo, sbo)``: the swizzle width in bytes
    (0, 32, 64, 128)."""
    swizzle: int


@dataclasses.dataclass(frozen=True)
class WgmmaMma:
    """``wgmma.mma_async(acc, a, b, dtype, a_layout, b_layout[, accumulate])``: the
    accumulator's type, the inputs' precision (``'float16'``, ``'bfloat16'``, ``'tf32'``),
    the two layouts and ``accumulate`` when it is a constant (None: a run-time bool)."""
    accumulator: object
    precision: str
    a_layout: str
    b_layout: str
    accumulate: object


@dataclasses.dataclass(frozen=True)
class WgmmaWait:
    """``wgmma.wait_group(n)``: the number of most recent groups left in flight."""
    n: int


@dataclasses.dataclass(frozen=True)
class WgmmaStore:
    """``wgmma.store_accumulator(dst, acc)``: the accumulator's type and ``dst``'s dtype
    (float32 or float16)."""
    accumulator: object
    dtype: object


# ---- asynchronous copies (cujit.pipeline) ----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PipelineCopy:
    """``pipeline.memcpy_async(dst, dst_index, src, src_index, nbytes)``: the bytes copied
    (4, 8 or 16) and the PTX cache operator (``'cg'`` for 16 bytes, else ``'ca'``)."""
    nbytes: int
    operator: str


@dataclasses.dataclass(frozen=True)
class PipelineWait:
    """``pipeline.wait_prior(n)``: the number of most recent groups left in flight."""
    n: int


@dataclasses.dataclass(frozen=True)
class VectorMake:
    """A vector-type construction (``cuda.float32x4(a, v2, d)``): the result ``type`` (a
    ``VectorType``) and, per argument, how many members it gives (``0``: a scalar converted
    to the base type; ``n``: a vector of ``n`` members of the same base)."""
    type: object
    parts: tuple


@dataclasses.dataclass(frozen=True)
class CacheHint:
    """A cache-hinted load (``cuda.ldcg(arr, i)``) or store (``cuda.stcg(arr, i, v)``):
    the PTX cache operator (``'ca'``, ``'cg'``, ``'cs'``, ``'lu'``, ``'cv'`` for loads;
    ``'cg'``, ``'cs'``, ``'wb'``, ``'wt'`` for stores) and the function's name."""
    operator: str
    name: str


# ---- kinds ---------------------------------------------------------------------------------
class CallKind(enum.Enum):
    """What a recognised call is.  Each member's value is its name and the payload class its
    :class:`Call` carries (``type(None)``: none)."""

    def __new__(cls, label, payload):
        obj = object.__new__(cls)
        obj._value_ = label
        obj.payload = payload
        return obj

    # builtins
    CAST = ("cast", Cast)                  # int/float/bool, NumPy and cujit scalar types
    COMPLEX = ("complex", type(None))
    MIN = ("min", Extremum)
    MAX = ("max", Extremum)
    ABS = ("abs", type(None))
    ROUND = ("round", type(None))
    POW = ("pow", type(None))
    LEN = ("len", type(None))
    ISINSTANCE = ("isinstance", IsInstance)
    TUPLE = ("tuple", type(None))          # tuple(t) of a tuple: its members, as a tuple
    RANGE = ("range", type(None))          # iterated by a for loop, never called
    ENUMERATE = ("enumerate", type(None))  # likewise
    ZIP = ("zip", type(None))              # likewise
    PRINT = ("print", PrintFormat)
    # maths
    MATH = ("math", MathFunc)              # math.* and NumPy's equivalents
    NP_ROUNDING = ("np_rounding", MathFunc)   # np.floor/ceil/trunc: a float result
    MATH_PARTS = ("math_parts", MathFunc)  # math.modf, frexp, ldexp
    CMATH = ("cmath", MathFunc)
    FP16 = ("fp16", MathFunc)
    BF16 = ("bf16", MathFunc)              # cuda.bf16.* and math.* of a bfloat16
    FP8 = ("fp8", FP8Conversion)           # cuda.fp8's kernel conversions
    BIT_COUNT = ("bit_count", type(None))
    CONJUGATE = ("conjugate", type(None))
    REDUCE = ("reduce", ArrayReduction)    # np.sum(a), a.max() …: the whole array
    UFUNC = ("ufunc", UfuncCall)           # NumPy ufuncs on arrays, and by their NumPy loop
    # arrays
    SHARED_ARRAY = ("shared.array", ArraySpec)
    LOCAL_ARRAY = ("local.array", ArraySpec)
    CONST_ARRAY = ("const.array_like", ConstArray)
    RESHAPE = ("reshape", Reshape)
    ARRAY_VIEW = ("array_view", ArrayView)
    ARRAY_COPY = ("array_copy", ArrayCopy)
    # thread indexing
    GRID = ("grid", GridAxes)
    GRIDSIZE = ("gridsize", GridAxes)
    # barriers and fences
    SYNCTHREADS = ("syncthreads", type(None))
    SYNCTHREADS_COUNT = ("syncthreads_count", type(None))
    SYNCTHREADS_AND = ("syncthreads_and", type(None))
    SYNCTHREADS_OR = ("syncthreads_or", type(None))
    SYNCWARP = ("syncwarp", type(None))
    THREADFENCE = ("threadfence", type(None))
    THREADFENCE_BLOCK = ("threadfence_block", type(None))
    THREADFENCE_SYSTEM = ("threadfence_system", type(None))
    THIS_GRID = ("cg.this_grid", type(None))
    GRID_SYNC = ("cg.grid_sync", type(None))
    # warp
    SHFL_SYNC = ("shfl_sync", ValueType)
    SHFL_UP_SYNC = ("shfl_up_sync", ValueType)
    SHFL_DOWN_SYNC = ("shfl_down_sync", ValueType)
    SHFL_XOR_SYNC = ("shfl_xor_sync", ValueType)
    BALLOT_SYNC = ("ballot_sync", type(None))
    ALL_SYNC = ("all_sync", type(None))
    ANY_SYNC = ("any_sync", type(None))
    EQ_SYNC = ("eq_sync", type(None))
    MATCH_ANY_SYNC = ("match_any_sync", ValueType)
    MATCH_ALL_SYNC = ("match_all_sync", ValueType)
    ACTIVEMASK = ("activemask", type(None))
    LANEMASK_LT = ("lanemask_lt", type(None))
    # integer and float intrinsics
    POPC = ("popc", type(None))
    BREV = ("brev", type(None))
    CLZ = ("clz", type(None))
    FFS = ("ffs", type(None))
    FMA = ("fma", type(None))
    CBRT = ("cbrt", type(None))
    SELP = ("selp", type(None))
    MULHI = ("mulhi", ValueType)
    NANOSLEEP = ("nanosleep", type(None))
    ATOMIC = ("atomic", Atomic)
    LIBDEVICE = ("libdevice", Libdevice)
    # tensor cores (cujit.wmma, beyond numba.cuda)
    WMMA_FRAGMENT = ("wmma.fragment", WmmaFragment)
    WMMA_FILL = ("wmma.fill_fragment", WmmaFill)
    WMMA_LOAD = ("wmma.load_matrix_sync", WmmaLoad)
    WMMA_MMA = ("wmma.mma_sync", WmmaMma)
    WMMA_STORE = ("wmma.store_matrix_sync", WmmaStore)
    # warpgroup MMA (cujit.wgmma, Hopper, beyond numba.cuda)
    WGMMA_ACCUMULATOR = ("wgmma.accumulator", WgmmaAccumulator)
    WGMMA_FILL = ("wgmma.fill_accumulator", WgmmaAccumulator)
    WGMMA_DESCRIPTOR = ("wgmma.make_descriptor", WgmmaDescriptor)
    WGMMA_FENCE = ("wgmma.fence", type(None))
    WGMMA_FENCE_PROXY = ("wgmma.fence_proxy_async", type(None))
    WGMMA_MMA = ("wgmma.mma_async", WgmmaMma)
    WGMMA_COMMIT = ("wgmma.commit_group", type(None))
    WGMMA_WAIT = ("wgmma.wait_group", WgmmaWait)
    WGMMA_STORE = ("wgmma.store_accumulator", WgmmaStore)
    # asynchronous global -> shared copies (cujit.pipeline, beyond numba.cuda)
    PIPELINE_COPY = ("pipeline.memcpy_async", PipelineCopy)
    PIPELINE_COMMIT = ("pipeline.commit", type(None))
    PIPELINE_WAIT = ("pipeline.wait_prior", PipelineWait)
    # user functions
    DEVICE = ("device", DeviceCall)
    # a kernel (@jit without device=True) called from device code: compiled as a device
    # function for the call's argument types, as numba-cuda's compile_device does
    KERNEL = ("kernel", DeviceCall)
    CLOSURE = ("closure", ClosureCall)
    # the extension API (cujit.extending)
    OVERLOAD = ("overload", OverloadCall)
    USER_INTRINSIC = ("user_intrinsic", UserIntrinsic)
    # external code (cuda.declare_device)
    EXTERN = ("extern", ExternCall)
    # CUDA vector types and cache-hinted memory access (issue #28)
    VECTOR = ("vector", VectorMake)
    CACHE_LOAD = ("cache_load", CacheHint)
    CACHE_STORE = ("cache_store", CacheHint)
    # C pointers: cffi's ffi.from_buffer(array) → the array's data pointer
    FROM_BUFFER = ("ffi.from_buffer", type(None))
    # an array over a pointer's memory (numba.cuda.np.numpy_support.carray / farray)
    CARRAY = ("carray", PointerArray)
    FARRAY = ("farray", PointerArray)


@dataclasses.dataclass(frozen=True, eq=False)
class Call:
    """What call ``node`` is: its ``kind`` and the kind's ``data`` (an instance of
    ``kind.payload``; None for kinds without a payload).  TypeError when ``data`` is not of
    the kind's payload class, so a wrong record fails where the typer makes it."""
    kind: CallKind
    data: object = None

    def __post_init__(self):
        if not isinstance(self.kind, CallKind):
            raise TypeError(f"Call kind must be a CallKind, got {self.kind!r}")
        if not isinstance(self.data, self.kind.payload):
            raise TypeError(f"a {self.kind.name} call carries a "
                            f"{self.kind.payload.__name__}, got {self.data!r}")


def resolve(key):
    """``(CallKind, name)`` of the typer's key ``key`` of a recognised callable (the key
    ``const_types`` gives it: ``'math.sin'``, ``'atomic.add'``, ``'npfloor'``,
    ``'syncthreads'``); ``name`` is the function's name in its family (None for kinds of one
    function).  ValueError for a key no kind covers."""
    family, dot, name = key.partition(".")
    if dot and family in _FAMILIES:
        if family == "math" and name in _MATH_PARTS:
            return CallKind.MATH_PARTS, name
        return _FAMILIES[family], name
    if key in _NP_ROUNDING:
        return CallKind.NP_ROUNDING, key[2:]
    if key in ("int", "float", "bool"):
        return CallKind.CAST, key
    return CallKind(key), None


_FAMILIES = {"math": CallKind.MATH, "cmath": CallKind.CMATH, "fp16": CallKind.FP16, "bf16": CallKind.BF16,
             "fp8": CallKind.FP8, "ufunc": CallKind.UFUNC, "reduce": CallKind.REDUCE,
             "atomic": CallKind.ATOMIC, "libdevice": CallKind.LIBDEVICE}
_MATH_PARTS = ("modf", "frexp", "ldexp")
_NP_ROUNDING = ("npfloor", "npceil", "nptrunc")


def call_of(tf, node):
    """The :class:`Call` the typer recorded for ``node`` in typed function ``tf``, or None
    (not a call, or a call the typer did not record)."""
    c = tf.info.get(node)
    return c if isinstance(c, Call) else None
