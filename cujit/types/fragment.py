"""The type of a warp-level matrix fragment (``cujit.wmma``, a cujit extension beyond
numba.cuda): what ``wmma.fragment(role, m, n, k, dtype, layout)`` gives inside a kernel.

A fragment is the part of one ``rows x cols`` matrix tile that a warp's tensor-core
instructions hold in registers, spread over its 32 lanes (CUDA C++'s
``nvcuda::wmma::fragment``, PTX's ``wmma`` operands).  The type is known at compile time:
its ``role`` (``'matrix_a'``, ``'matrix_b'`` or ``'accumulator'``), shape ``(m, n, k)``,
``precision`` (``'float16'``, ``'bfloat16'``, ``'tf32'`` for the inputs, ``'float32'``
for the accumulator) and ``layout`` (``'row_major'``/``'col_major'`` for the inputs, None
for the accumulator, whose layout is given at load/store).
"""
from .core import Type, float16, float32, uint16

__all__ = ["Fragment", "WarpgroupAccumulator", "WgmmaDescriptor", "wgmma_descriptor", "ROLES",
           "LAYOUTS", "SHAPES"]

ROLES = ("matrix_a", "matrix_b", "accumulator")
LAYOUTS = ("row_major", "col_major")
#: The tile shapes the hardware offers per input precision (PTX ISA, "Matrix shapes" of
#: ``wmma``; sm_80 and sm_90): (m, n, k).
SHAPES = {"float16": ((16, 16, 16),), "bfloat16": ((16, 16, 16),), "tf32": ((16, 16, 8),)}
# The element type of the arrays a fragment loads from / stores to: bfloat16 has no NumPy
# dtype, so its tiles live in uint16 arrays holding the bf16 bits (wmma.to_bfloat16).
_STORAGE = {"float16": float16, "bfloat16": uint16, "tf32": float32, "float32": float32}


class Fragment(Type):
    """``Fragment(role, m, n, k, precision, layout)``: see the module docstring.  ValueError
    for a role, precision, shape or layout the hardware does not offer."""

    @classmethod
    def _key_of(cls, role, m, n, k, precision, layout=None):
        return (role, int(m), int(n), int(k), precision, layout)

    def __init__(self, role, m, n, k, precision, layout=None):
        if role not in ROLES:
            raise ValueError(f"wmma fragment role must be one of {', '.join(ROLES)}; got "
                             f"{role!r}")
        inputs = role != "accumulator"
        if inputs:
            if precision not in SHAPES:
                raise ValueError(f"a {role} fragment holds float16, bfloat16 or tf32 values; "
                                 f"got {precision!r}")
            if layout not in LAYOUTS:
                raise ValueError(f"a {role} fragment needs a layout, 'row_major' or "
                                 f"'col_major'; got {layout!r}")
        else:
            if precision != "float32":
                raise ValueError("an accumulator fragment holds float32 values (fp32 "
                                 f"accumulation); got {precision!r}")
            if layout is not None:
                raise ValueError("an accumulator fragment takes no layout (give it to "
                                 f"load_matrix_sync / store_matrix_sync); got {layout!r}")
        shape = (int(m), int(n), int(k))
        allowed = sorted({s for ss in SHAPES.values() for s in ss}) if not inputs \
            else SHAPES[precision]
        if shape not in allowed:
            raise ValueError(f"wmma shape m{shape[0]}n{shape[1]}k{shape[2]} is not offered for "
                             f"{precision} {role} fragments; offered: " +
                             ", ".join(f"m{a}n{b}k{c}" for a, b, c in allowed))
        self.role, self.shape, self.precision, self.layout = role, shape, precision, layout
        self.m, self.n, self.k = shape
        self.rows, self.cols = {"matrix_a": (self.m, self.k), "matrix_b": (self.k, self.n),
                                "accumulator": (self.m, self.n)}[role]
        self.storage = _STORAGE[precision]
        self.name = (f"Fragment({role}, m{self.m}n{self.n}k{self.k}, {precision}"
                     + (f", {layout})" if layout else ")"))

    def _ctor_args(self):
        return (self.role, self.m, self.n, self.k, self.precision, self.layout)

    @property
    def registers(self):
        """(count, kind) of the 32-bit registers each lane holds (PTX ISA ``wmma`` fragment
        sizes): ``'f32'`` registers of floats, or ``'b32'`` of packed f16x2/bf16x2/tf32."""
        if self.role == "accumulator":
            return 8, "f32"
        if self.precision == "float16":
            return 8, "b32"
        return 4, "b32"


class WarpgroupAccumulator(Type):
    """``WarpgroupAccumulator(m, n)``: the float32 accumulator of a Hopper warpgroup MMA
    (``cujit.wgmma.accumulator``, PTX ``wgmma.mma_async``'s D): an ``m x n`` tile held by the
    warpgroup's 128 threads, ``n / 2`` float32 registers each.  ``m`` is 64 and ``n`` a
    multiple of 8 from 8 to 256 (the shapes PTX offers); ValueError otherwise."""

    @classmethod
    def _key_of(cls, m, n):
        # checked here: the interning looks the key up before __init__ runs
        for name, v in (("m", m), ("n", n)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"a wgmma accumulator's {name} must be an int, got {v!r}")
        return (m, n)

    def __init__(self, m, n):
        if m != 64 or not (8 <= n <= 256 and n % 8 == 0):
            raise ValueError(f"wgmma offers m64nN accumulators with N a multiple of 8 from 8 "
                             f"to 256; got m={m}, n={n}")
        self.m, self.n = m, n
        self.name = f"WarpgroupAccumulator(m{m}n{n}, float32)"

    def _ctor_args(self):
        return (self.m, self.n)

    @property
    def registers(self):
        """The float32 registers each thread of the warpgroup holds."""
        return self.n // 2


class WgmmaDescriptor(Type):
    """The type of a shared-memory matrix descriptor (``cujit.wgmma.make_descriptor``): a
    64-bit value in compiled kernels (PTX ISA, "Matrix Descriptor Format")."""

    def __init__(self):
        self.name = "WgmmaDescriptor"

    def _ctor_args(self):
        return ()


wgmma_descriptor = WgmmaDescriptor()
