"""``compile_to_llvm(pyfunc, argtypes, kernel=True)`` → ``LoweredFunction`` (NVVM IR text).

The module is NVVM's LLVM-7 dialect as libNVVM 13 reads it (found by experiment): typed
pointers (llvmlite.ir's default), triple ``nvptx64-nvidia-cuda``, NVVM's data layout,
``!nvvm.annotations`` marking the kernel and ``!nvvmir.version = !{2, 0, 3, 1}``.  Shared
arrays are ``internal addrspace(3)`` globals, one per call site, uniquely named; all size-0
shared arrays share one ``external addrspace(3)`` byte array; ``const.array_like`` data is an
``internal addrspace(4) constant``; device functions are ``internal`` functions of the same
module.

Kernel ABI (docs/interfaces.md): one kernel parameter per flattened value — an array is its
data pointer, then ``shape[ndim]`` and ``strides[ndim]`` (i64, bytes); a record is a data
pointer; bool is an i8; complex is two floats; a tuple is its elements in order.
"""
import hashlib
import re

from ..driver.errors import CudaSupportError, missing_toolchain_message

# This module is the NVVM backend's entry (build.py and compile_ptx import it when they compile
# for the GPU; the simulator never does), so the lean install's missing llvmlite is reported
# here, naming the extra, before any of the lower_* modules fails on it.
try:
    from llvmlite import ir
except ImportError as exc:
    raise CudaSupportError(missing_toolchain_message(
        "compiling a kernel to PTX (a GPU launch, compile_ptx, inspect_asm)", exc)) from exc

from .. import types as T
from ..frontend.errors import CompileError, TypingError
from ..frontend.linkable import same_entry
from .ltypes import I8, I8P, I32, I64, alignment_of, cast, ltype, mtype, passes_param
from ..frontend.rules import PseudoType
from ..frontend.typeinfer import CompileEnv, infer

__all__ = ["compile_to_llvm", "LoweredFunction", "arch_target", "flatten_argtypes", "DATALAYOUT",
           "TRIPLE"]

TRIPLE = "nvptx64-nvidia-cuda"
DATALAYOUT = ("e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-"
              "v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64")
NVVMIR_VERSION = (2, 0, 3, 1)


class LoweredFunction:
    """A function lowered to NVVM IR.

    ``llvm_ir`` (str), ``name`` (symbol of the kernel / device function), ``argtypes``
    (tuple of cujit types), ``return_type``, ``uses_dynamic_shared`` (bool),
    ``static_shared_bytes`` (int, bytes of all static shared arrays), ``const_bytes`` (int,
    bytes placed in constant memory), ``source_info`` (dict: filename, firstlineno,
    qualname), ``param_types`` (list of str, the LLVM type of each kernel parameter, in order),
    ``linked`` (tuple: the ``link=`` code of the declared and device functions it calls),
    ``arch_specific`` (bool: it uses instructions of sm_90a only, ``cujit.wgmma``; see
    :func:`arch_target`).
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return f"<LoweredFunction {self.name} {self.argtypes}>"


def arch_target(lowered, cc):
    """The compute capability to compile ``lowered`` (a :class:`LoweredFunction`) for when
    ``cc`` is asked: ``cc`` itself, or for code that uses sm_90a's instructions
    (``cujit.wgmma``) ``(9, 0, 'a')``.  CompileError when such code is asked for another
    compute capability than 9.0 (Blackwell has no wgmma)."""
    if not getattr(lowered, "arch_specific", False):
        return cc
    if tuple(cc[:2]) != (9, 0):
        raise CompileError(f"{lowered.name} uses cujit.wgmma (Hopper's warpgroup MMA), which "
                           f"exists on compute capability 9.0 only (sm_90a); asked to compile "
                           f"for {'.'.join(map(str, cc))}")
    return (9, 0, "a")


def _scalar_params(t):
    """LLVM parameter types of one launch argument of type ``t`` (the kernel ABI)."""
    if isinstance(t, T.Array):
        return [mtype(t.dtype).as_pointer()] + [I64] * (2 * t.ndim)
    if isinstance(t, T.Record):
        return [I8P]
    if isinstance(t, (T.CPointer, T.RawPointer)):
        return [ltype(t)]       # a device address, passed as the pointer it is
    if isinstance(t, T.Boolean):
        return [I8]
    if isinstance(t, T.Complex):
        f = ltype(t.underlying_float)
        return [f, f]
    if isinstance(t, (T.UniTuple, T.Tuple)):
        out = []
        for et in t.types:
            out.extend(_scalar_params(et))
        return out
    if isinstance(t, (T.Integer, T.Float, T.BFloat16, T.NPDatetime, T.NPTimedelta)):
        return [ltype(t)]
    if isinstance(t, T.EnumMember):
        return _scalar_params(t.dtype)
    if t is T.none:
        return []       # a parameter given None: known when compiling, nothing passed
    raise TypingError(f"a kernel cannot take an argument of type {t}")


def flatten_argtypes(argtypes):
    """The list of LLVM parameter types of a kernel taking ``argtypes``."""
    out = []
    for t in argtypes:
        out.extend(_scalar_params(t))
    return out


def _rebuild(b, t, params):
    """Value of type ``t`` from kernel parameters (consumes from the ``params`` iterator)."""
    if isinstance(t, T.EnumMember):
        return _rebuild(b, t.dtype, params)
    if t is T.none:
        return None
    if isinstance(t, T.Array):
        data = next(params)
        out = ir.Constant(ltype(t), ir.Undefined)
        out = b.insert_value(out, data, 0)
        shapes = [next(params) for _ in range(t.ndim)]
        strides = [next(params) for _ in range(t.ndim)]
        for k in range(t.ndim):
            out = b.insert_value(out, shapes[k], [1, k])
            out = b.insert_value(out, strides[k], [2, k])
        return out
    if isinstance(t, T.Boolean):
        return b.trunc(next(params), ir.IntType(1))
    if isinstance(t, T.Complex):
        re, im = next(params), next(params)
        out = ir.Constant(ltype(t), ir.Undefined)
        return b.insert_value(b.insert_value(out, re, 0), im, 1)
    if isinstance(t, (T.UniTuple, T.Tuple)):
        out = ir.Constant(ltype(t), ir.Undefined)
        for i, et in enumerate(t.types):
            out = b.insert_value(out, _rebuild(b, et, params), i)
        return out
    return next(params)


class ModuleContext:
    """One LLVM module being built: declarations, globals and device functions, each once."""

    def __init__(self, name, debug=False, lineinfo=False):
        self.debug = debug          # jit(debug=True): record raises for the host
        self.debuginfo = None       # DebugInfo when lineinfo/debug ask for source lines
        self.uses_grid_sync = False     # cg grid.sync(): needs a cooperative launch
        self.linked = []            # link= code of the declared functions called (in order)
        self.exceptions = []        # (class, args, SourceLocation, function name) per raise site, code - 1
        self.module = ir.Module(name=name)
        self.module.triple = TRIPLE
        self.module.data_layout = DATALAYOUT
        self._decls = {}
        self._asm = {}
        self._dyn = None
        self._consts = {}
        self._tables = {}
        self._strings = {}
        self._devfuncs = {}
        self._ipow = {}
        self._n = 0
        self.static_shared_bytes = 0
        self.const_bytes = 0
        self.uses_dynamic_shared = False

    def record_extern(self, fn):
        """Note a call of declared function ``fn``: its ``link=`` code joins the kernel's
        link (each entry once) and its ``use_cooperative`` the kernel's launch."""
        for item in fn.link:
            if not any(same_entry(item, x) for x in self.linked):
                self.linked.append(item)
        if fn.use_cooperative:
            self.uses_grid_sync = True

    def unique(self, stem):
        self._n += 1
        return f"{stem}_{self._n}"

    def declare(self, name, fnty):
        fn = self._decls.get(name)
        if fn is None:
            fn = self.module.globals.get(name) or ir.Function(self.module, fnty, name)
            self._decls[name] = fn
        return fn

    def range_md(self, lo, hi):
        """``!{i32 lo, i32 hi}`` range metadata (cached)."""
        key = ("range", lo, hi)
        md = self._asm.get(key)
        if md is None:
            md = self.module.add_metadata([ir.Constant(I32, lo), ir.Constant(I32, hi)])
            self._asm[key] = md
        return md

    def inline_asm(self, text, constraint, ret, side_effect=True):
        """Inline PTX; ``side_effect=False`` lets LLVM merge repeated reads of a register
        that is constant for the whole launch (``%dynamic_smem_size``)."""
        key = (text, constraint, side_effect)
        asm = self._asm.get(key)
        if asm is None:
            asm = ir.InlineAsm(ir.FunctionType(ret, []), text, constraint,
                               side_effect=side_effect)
            self._asm[key] = asm
        return asm

    def dynamic_shared(self):
        """The one ``external addrspace(3)`` array every size-0 shared array aliases."""
        if self._dyn is None:
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, 0), "_cujit_dynamic_shared",
                                  addrspace=3)
            g.linkage = "external"
            g.align = 16
            self._dyn = g
            self.uses_dynamic_shared = True
        return self._dyn

    def static_shared(self, shape, dtype):
        n = 1
        for d in shape:
            n *= d
        g = ir.GlobalVariable(self.module, ir.ArrayType(mtype(dtype), n),
                              self.unique("_cujit_shared"), addrspace=3)
        g.linkage = "internal"
        g.initializer = ir.Constant(g.value_type, ir.Undefined)
        g.align = max(alignment_of(dtype), 4)
        self.static_shared_bytes += n * dtype.dtype.itemsize
        return g

    def const_array(self, arr, align):
        """An ``internal addrspace(4) constant`` holding ``arr``'s bytes (once per array)."""
        key = id(arr)
        hit = self._consts.get(key)
        if hit is not None and hit[0] is arr:
            return hit[1]
        data = arr.tobytes()
        ty = ir.ArrayType(I8, len(data))
        g = ir.GlobalVariable(self.module, ty, self.unique("_cujit_const"), addrspace=4)
        g.linkage = "internal"
        g.global_constant = True
        g.initializer = ir.Constant(ty, bytearray(data))
        g.align = max(align, 4)         # the dtype's natural alignment, never its size
        self.const_bytes += len(data)
        self._consts[key] = (arr, g)
        return g

    def const_table(self, key, make, align):
        """The constant array of ``make()`` (a NumPy array, made once per module for the
        hashable ``key``): a lookup table the generated code reads (cmath's special
        values)."""
        g = self._tables.get(key)
        if g is None:
            g = self._tables[key] = self.const_array(make(), align)
        return g

    def cstring(self, text):
        """Generic ``i8*`` to a NUL-terminated string in constant memory (``addrspace(4)``,
        as numba-cuda's: ``print`` format strings count in the kernel's CONST_SIZE_BYTES)."""
        g = self._strings.get(text)
        if g is None:
            data = bytearray(text.encode("utf-8")) + b"\0"
            ty = ir.ArrayType(I8, len(data))
            g = ir.GlobalVariable(self.module, ty, self.unique("_cujit_str"), addrspace=4)
            g.linkage = "internal"
            g.global_constant = True
            g.initializer = ir.Constant(ty, data)
            self._strings[text] = g
        p = g.gep([ir.Constant(I32, 0), ir.Constant(I32, 0)])
        # llvmlite has no constant addrspacecast: the constant expression spelled out
        return ir.FormattedConstant(I8P, f"addrspacecast ({p.type} {p.get_reference()} to i8*)")

    def ipow(self, ity):
        """``int ** int`` by squaring (a negative exponent gives 0, or ±1 for base ±1)."""
        fn = self._ipow.get(ity.width)
        if fn is not None:
            return fn
        fn = ir.Function(self.module, ir.FunctionType(ity, [ity, ity]),
                         f"_cujit_ipow_i{ity.width}")
        fn.linkage = "internal"
        base, exp = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        loop = fn.append_basic_block("loop")
        done = fn.append_basic_block("done")
        one, zero = ir.Constant(ity, 1), ir.Constant(ity, 0)
        start = b.block
        b.branch(loop)
        b.position_at_end(loop)
        acc = b.phi(ity)
        bb = b.phi(ity)
        e = b.phi(ity)
        acc.add_incoming(one, start)
        bb.add_incoming(base, start)
        e.add_incoming(exp, start)
        odd = b.icmp_unsigned("!=", b.and_(e, one), zero)
        acc2 = b.select(odd, b.mul(acc, bb), acc)
        e2 = b.lshr(e, one)
        bb2 = b.mul(bb, bb)
        acc.add_incoming(acc2, loop)
        bb.add_incoming(bb2, loop)
        e.add_incoming(e2, loop)
        b.cbranch(b.icmp_signed(">", e2, zero), loop, done)
        b.position_at_end(done)
        res = b.phi(ity)
        res.add_incoming(acc2, loop)
        b.ret(res)
        # negative exponents: Python gives a float; as Numba we return 0 (or ±1 for ±1)
        self._ipow[ity.width] = _ipow_wrapper(self.module, fn, ity)
        return self._ipow[ity.width]

    def device_function(self, tf):
        """The ``ir.Function`` of a typed device function (lowered on first use)."""
        fn = self._devfuncs.get(id(tf))
        if fn is not None:
            return fn[1]
        rt = ltype(tf.return_type)
        # a function passed as a value is known when typing: it takes no parameter; nor does
        # an empty tuple (libNVVM rejects empty parameter types)
        real = [passes_param(t) for t in tf.argtypes]
        fnty = ir.FunctionType(rt, [ltype(t) for t, r in zip(tf.argtypes, real) if r])
        # the name length-prefixed, as Itanium mangling (and so numba-cuda's symbols) write
        # it: ``_cujit_dev_8set_zero_1`` never reads as the tail of ``call_set_zero``
        stem = _safe(tf.fsrc.name)
        fn = ir.Function(self.module, fnty, self.unique(f"_cujit_dev_{len(stem)}{stem}"))
        fn.linkage = "internal"
        if getattr(tf, "force_inline", False):
            fn.attributes.add("alwaysinline")
        self._devfuncs[id(tf)] = (tf, fn)
        from .llvmgen import FunctionLowerer
        lw = FunctionLowerer(self, tf, fn)
        params = iter(fn.args)
        lw.lower([next(params) if r else None if isinstance(t, PseudoType) or t is T.none
                  else ir.Constant(ltype(t), ir.Undefined) for r, t in zip(real, tf.argtypes)])
        return fn


def _ipow_wrapper(module, core, ity):
    fn = ir.Function(module, ir.FunctionType(ity, [ity, ity]), f"_cujit_ipow_w{ity.width}")
    fn.linkage = "internal"
    base, exp = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one = ir.Constant(ity, 0), ir.Constant(ity, 1)
    neg = b.icmp_signed("<", exp, zero)
    pos_r = b.call(core, [base, b.select(neg, zero, exp)])
    # base 1 → 1; base -1 → ±1 by parity; else 0
    is_one = b.icmp_signed("==", base, one)
    is_m1 = b.icmp_signed("==", base, ir.Constant(ity, -1))
    odd = b.icmp_unsigned("!=", b.and_(exp, one), zero)
    m1_r = b.select(odd, ir.Constant(ity, -1), one)
    neg_r = b.select(is_one, one, b.select(is_m1, m1_r, zero))
    b.ret(b.select(neg, neg_r, pos_r))
    return fn


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _argtypes_of(argtypes):
    if isinstance(argtypes, T.Signature):
        return argtypes.args
    if isinstance(argtypes, str):
        return T.parse_signature(argtypes).args
    argtypes = tuple(argtypes)
    for a in argtypes:
        if not isinstance(a, T.Type):
            raise TypeError(f"argtypes must be cujit types, got {a!r}")
    return argtypes


# NVVM IR's kernel properties for launch_bounds' three values (NVVM IR spec, "Global
# property annotation"); libNVVM turns them into .maxntid, .minnctapersm, .maxclusterrank.
_LAUNCH_BOUND_PROPS = ("maxntidx", "minctasm", "cluster_max_blocks")


def compile_to_llvm(pyfunc, argtypes, kernel=True, debug=False, lineinfo=False,
                    launch_bounds=None, source=None, abi_name=None, return_type=None,
                    forceinline=False):
    """Type and lower ``pyfunc`` for ``argtypes`` (tuple of cujit types, a Signature or a
    signature string) into one NVVM IR module.  ``debug``: numba.cuda's ``debug=True``
    (assertions compiled, division by zero checked, raises recorded for the host: see
    :mod:`.lower_exceptions`); ``debug`` or ``lineinfo``: source lines as debug metadata
    (:mod:`.debuginfo`), which libNVVM turns into ``.loc`` directives.  ``launch_bounds``:
    a kernel's bounds as :func:`.jitoptions.check_launch_bounds` returns them (only the total
    threads per block is bounded, y and z taken as 1, as numba-cuda and CUDA C do).
    ``source``: the FunctionSource ``pyfunc``'s owner keeps (parsed again when None).
    ``abi_name``: the symbol of a device function (``kernel=False``) instead of cujit's
    mangled name (``compile(abi_info={'abi_name': ...})``).  ``return_type``: a device
    function's declared result type (a signature's); when the inferred one differs, the
    symbol is a wrapper converting to it, so that callers declaring that type (C++ code
    linked with it) read the value right.  ``forceinline``: the device function's symbol
    gets LLVM's ``alwaysinline`` attribute (``compile(forceinline=True)``).

    Returns a ``LoweredFunction``.  Raises ``TypingError`` (untypable or unsupported code)
    or ``CompileError`` (resource limits: 48 KiB static shared, 64 KiB constant memory) whose
    message names the file, line and column and shows the source line.
    """
    argtypes = _argtypes_of(argtypes)
    env = CompileEnv(debug=debug)
    tf = infer(pyfunc, argtypes, kernel=kernel, env=env, source=source)
    fsrc = tf.fsrc
    digest = hashlib.sha1(repr((fsrc.qualname, fsrc.filename, argtypes)).encode()).hexdigest()
    name = abi_name or f"_cujit_{_safe(fsrc.qualname)}_{digest[:12]}"
    m = ModuleContext(name, debug=bool(debug))
    if debug or lineinfo:
        from .debuginfo import DebugInfo
        m.debuginfo = DebugInfo(m.module, fsrc.filename, full=bool(debug))
    from .llvmgen import FunctionLowerer
    if kernel:
        abi = tf.argtypes          # IntegerLiteral arguments are passed as their base type
        params = flatten_argtypes(abi)
        fn = ir.Function(m.module, ir.FunctionType(ir.VoidType(), params), name)
        lw = FunctionLowerer(m, tf, fn)
        it = iter(fn.args)
        argvals = [_rebuild(lw.b, t, it) for t in abi]
        lw.lower(argvals)
        m.module.add_named_metadata("nvvm.annotations", [fn, "kernel", ir.Constant(I32, 1)])
        # libNVVM's LTO-IR (-gen-lto) lets nvJitLink drop a kernel nothing marks as used
        used = ir.GlobalVariable(m.module, ir.ArrayType(I8P, 1), "llvm.used")
        used.linkage = "appending"
        used.section = "llvm.metadata"
        used.initializer = ir.Constant(ir.ArrayType(I8P, 1), [fn.bitcast(I8P)])
        for prop, bound in zip(_LAUNCH_BOUND_PROPS, launch_bounds or ()):
            m.module.add_named_metadata("nvvm.annotations", [fn, prop, ir.Constant(I32, bound)])
    else:
        params = [ltype(t) for t in tf.argtypes]
        rt = tf.return_type
        out_rt = return_type if return_type is not None else rt
        wrap = return_type is not None and return_type != rt and \
            isinstance(rt, T.Scalar) and isinstance(return_type, T.Scalar)
        # libNVVM drops float16 (LLVM half) parameters and results of a .func it exports
        # (the PTX neither loads nor stores them): the exported function passes their
        # bits as i16, the ``.b16`` of CUDA C's __half (and of numba-cuda's float16 model)
        halves = any(t is T.float16 for t in tf.argtypes) or out_rt is T.float16
        wrap = wrap or halves

        def outer_type(t):
            return ir.IntType(16) if t is T.float16 else ltype(t)
        fn = ir.Function(m.module, ir.FunctionType(ltype(rt), params),
                         name + "_impl" if wrap else name)
        FunctionLowerer(m, tf, fn).lower(list(fn.args))
        if wrap:
            fn.linkage = "internal"
            outer = ir.Function(m.module, ir.FunctionType(
                outer_type(out_rt), [outer_type(t) for t in tf.argtypes]), name)
            b = ir.IRBuilder(outer.append_basic_block("entry"))
            inner_args = [b.bitcast(a, ltype(t)) if t is T.float16 else a
                          for a, t in zip(outer.args, tf.argtypes)]
            r = cast(b, b.call(fn, inner_args), rt, out_rt)
            b.ret(b.bitcast(r, ir.IntType(16)) if out_rt is T.float16 else r)
            fn = outer
        if forceinline:
            fn.attributes.add("alwaysinline")
    m.module.add_named_metadata("nvvmir.version",
                                [ir.Constant(I32, v) for v in NVVMIR_VERSION])
    try:
        text = str(m.module)
    except Exception as e:     # pragma: no cover - an llvmlite formatting bug
        raise CompileError(f"could not print the LLVM module: {e}") from e
    declared = return_type if not kernel and return_type is not None else tf.return_type
    return LoweredFunction(
        llvm_ir=text, name=name, argtypes=tf.argtypes, return_type=declared,
        uses_dynamic_shared=m.uses_dynamic_shared or any(
            f.uses_dynamic_shared for f in tf.all_functions()),
        static_shared_bytes=m.static_shared_bytes, const_bytes=m.const_bytes,
        source_info={"filename": fsrc.filename, "firstlineno": fsrc.firstlineno,
                     "qualname": fsrc.qualname},
        param_types=[str(p) for p in params], exceptions=list(m.exceptions),
        uses_grid_sync=m.uses_grid_sync,
        arch_specific=any(f.uses_wgmma for f in tf.all_functions()),
        linked=tuple(m.linked) + tuple(x for x in env.linked
                                       if not any(same_entry(x, y) for y in m.linked)))
