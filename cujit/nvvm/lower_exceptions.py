"""Lowering of ``raise``/``assert`` and debug-mode division checks, and the host side that turns
a device exception into a Python exception after a debug launch (numba.cuda's model).

Device side.  A raise ends the thread: ``ret`` in a kernel, PTX ``exit`` in a device function
(so a raise inside a device function also stops the thread, where Numba's status return
does).  Without ``debug=True`` nothing else happens, as in numba.cuda (the exception is
dropped and the other threads carry on).  With ``debug=True`` the module holds one global,
``_cujit_exc_state`` (``[7 x i32]`` in global memory: exception code, ``threadIdx`` x/y/z,
``blockIdx`` x/y/z); the first thread that raises sets the code (``cmpxchg`` 0 → code, so the
first raiser wins) and writes its indices.  Codes count the module's raise sites from 1;
``LoweredFunction.exceptions[code - 1]`` is ``(class, args, SourceLocation)``.

Host side (:func:`check_after_launch`).  After a debug launch the host reads the global
(a synchronous copy, so it waits for the kernel), zeroes it again, and raises
``cls(*args)``-like: the class raised on the device, its message prefixed with where and by
which thread it was raised, as Numba does: ``In function 'k', file f.py, line 3,
tid=[0, 0, 0] ctaid=[0, 0, 0]: message``.

Debug mode also checks divisors: ``/``, ``//`` and ``%`` by zero raise ZeroDivisionError
(Numba's Python error model under ``debug=True``); without debug integer ``//``/``%`` by zero
give 0 and float division follows IEEE (inf/NaN).
"""
import ctypes

from llvmlite import ir

from .. import types as T
from .lower_sreg import sreg
from .ltypes import I32, ltype, truth

__all__ = ["EXC_GLOBAL", "lower_raise", "lower_assert", "check_divisor", "check_after_launch",
           "format_exception"]

EXC_GLOBAL = "_cujit_exc_state"
_STATE_WORDS = 7


def _state_global(m):
    g = m.module.globals.get(EXC_GLOBAL)
    if g is None:
        ty = ir.ArrayType(I32, _STATE_WORDS)
        g = ir.GlobalVariable(m.module, ty, EXC_GLOBAL, addrspace=1)
        g.initializer = ir.Constant(ty, None)
        g.align = 4
    return g


def _register(m, cls, args, loc):
    m.exceptions.append((cls, args, loc))
    return len(m.exceptions)


def emit_raise(lw, cls, args, node):
    """End the thread at ``node`` raising ``cls(*args)`` (recorded for the host in debug
    mode).  Leaves the builder in a terminated block."""
    b = lw.b
    if getattr(lw.m, "debug", False):
        code = _register(lw.m, cls, args, lw.loc(node))
        g = _state_global(lw.m)
        zero = ir.Constant(I32, 0)
        slot0 = b.gep(g, [zero, zero], inbounds=True)
        res = b.cmpxchg(slot0, zero, ir.Constant(I32, code), "monotonic", "monotonic")
        with b.if_then(b.extract_value(res, 1)):
            k = 1
            for reg in ("threadIdx", "blockIdx"):
                for axis in "xyz":
                    b.store(sreg(lw, reg, axis),
                            b.gep(g, [zero, ir.Constant(I32, k)], inbounds=True))
                    k += 1
    rt = lw.tf.return_type
    if lw.tf.kernel:
        b.ret_void()
        return
    # a device function: stop the thread here (PTX exit), then a formal return
    b.call(lw.m.inline_asm("exit;", "", ir.VoidType()), [])
    if rt is T.void or rt is None:
        lw.emit_return(None)
    else:
        lw.emit_return(ir.Constant(ltype(rt), None))


def lower_raise(lw, s):
    """``raise`` statement ``s`` (typed by :func:`.exceptions.type_raise`)."""
    r = lw.tf.info[s]
    emit_raise(lw, r.cls, r.args, s)


def lower_assert(lw, s):
    """``assert`` statement ``s``: compiled only in debug mode."""
    info = lw.tf.info.get(s)
    if info is None:
        return
    cls, args = info.cls, info.args
    ok = truth(lw.b, lw.expr(s.test), lw.ty(s.test))
    fail = lw.func.append_basic_block("assert.fail")
    cont = lw.func.append_basic_block("assert.ok")
    lw.b.cbranch(ok, cont, fail)
    lw.b.position_at_end(fail)
    emit_raise(lw, cls, args, s)
    lw.b.position_at_end(cont)


_DIV_MESSAGES = {("/", False): "division by zero", ("/", True): "float division by zero",
                 ("//", False): "integer division or modulo by zero",
                 ("//", True): "float floor division by zero",
                 ("%", False): "integer modulo by zero", ("%", True): "float modulo by zero"}


def check_divisor(lw, op, a_t, v, t, node):
    """In debug mode, raise ZeroDivisionError when divisor ``v`` (type ``t``) of ``op``
    (``/``, ``//``, ``%``; left operand type ``a_t``) is zero.  No code without debug."""
    if not getattr(lw.m, "debug", False):
        return
    b = lw.b
    if isinstance(t, (T.Integer, T.Boolean)):
        if isinstance(v, ir.Constant) and v.constant:
            return
        is_zero = b.icmp_unsigned("==", v, ir.Constant(v.type, 0))
    elif isinstance(t, T.Float):
        is_zero = b.fcmp_ordered("==", v, ir.Constant(v.type, 0.0))
    else:
        return      # complex division follows IEEE as in Numba
    is_float = isinstance(t, T.Float) or isinstance(a_t, T.Float)
    msg = _DIV_MESSAGES[(op, is_float)]
    with b.if_then(is_zero, likely=False):
        emit_raise(lw, ZeroDivisionError, (msg,), node)


def check_tuple_index(lw, idx, count, node):
    """In debug mode, raise IndexError("tuple index out of range") when the run-time index
    ``idx`` (i64, negative values already wrapped) of a tuple of ``count`` items is outside
    it (numba's check in debug mode); no code without debug."""
    if not getattr(lw.m, "debug", False):
        return
    bad = lw.b.icmp_unsigned(">=", idx, ir.Constant(idx.type, count))
    with lw.b.if_then(bad, likely=False):
        emit_raise(lw, IndexError, ("tuple index out of range",), node)


def format_exception(cls, args, loc, qualname, tid, ctaid):
    """The host exception for a device raise: ``cls`` with Numba's message form."""
    where = (f"In function '{qualname}', file {loc.filename}, line {loc.line}, "
             f"tid={list(tid)} ctaid={list(ctaid)}")
    text = where if not args else f"{where}: {', '.join(str(a) for a in args)}"
    try:
        exc = cls(text)
    except Exception:       # a class whose constructor wants other arguments
        exc = cls.__new__(cls)
        exc.args = (text,)
    return exc


def check_after_launch(compiled, lk, drv, qualname, stream_handle=0):
    """After a launch of debug kernel ``compiled`` (loaded as ``lk``) on stream
    ``stream_handle``: wait for it, and raise the exception its first raising thread recorded
    (resetting the record), if any."""
    excs = getattr(compiled, "exceptions", None)
    if not excs:
        return
    drv.stream_synchronize(stream_handle)
    ptr, size = lk.module.get_global(EXC_GLOBAL)
    buf = (ctypes.c_int32 * _STATE_WORDS)()
    drv.memcpy_dtoh(ctypes.addressof(buf), ptr, ctypes.sizeof(buf))
    code = buf[0]
    if code == 0:
        return
    drv.memset_d8(ptr, 0, ctypes.sizeof(buf))
    if not 1 <= code <= len(excs):
        raise RuntimeError(f"kernel {qualname} recorded an unknown exception code {code}")
    cls, args, loc = excs[code - 1]
    raise format_exception(cls, args, loc, qualname, buf[1:4], buf[4:7])
