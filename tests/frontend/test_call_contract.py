"""The call contract (frontend/callkinds.py): the typer records each call as a typed
``Call(kind, payload)``, and every backend has exactly one handler per ``CallKind``."""
import ast
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.calls import runtime as calls_impl
from cujit.frontend import const_types
from cujit.nvvm import lower_calls
from cujit.frontend.callkinds import (Atomic, Call, CallKind, Cast, Extremum, GridAxes, MathFunc,
                                      ValueType, call_of, resolve)
from cujit.frontend.errors import CompileError, TypingError
from cujit.frontend.rules import Func
from cujit.frontend.typeinfer import infer
from cujit.simulator import typedast, vecexpr

BACKENDS = {
    "nvvm lowering (lower_calls._HANDLERS)": lower_calls._HANDLERS,
    "per-thread executor (typedast._CALLS)": typedast._CALLS,
    "vector executor (vecexpr._VCALLS)": vecexpr._VCALLS,
}


def unhandled(table):
    """The kinds ``table`` has no handler for, and its keys that are not kinds."""
    return ({k for k in CallKind if k not in table},
            {k for k in table if not isinstance(k, CallKind)})


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_every_call_kind_has_one_handler_in_each_backend(backend):
    missing, stray = unhandled(BACKENDS[backend])
    assert not missing, f"{backend} has no handler for {sorted(k.name for k in missing)}"
    assert not stray, f"{backend} has keys that are not CallKinds: {stray}"
    assert all(callable(h) for h in BACKENDS[backend].values())


def test_unhandled_names_a_missing_kind_and_a_string_key():
    table = dict(lower_calls._HANDLERS)
    del table[CallKind.POPC]
    table["popc"] = lower_calls._HANDLERS[CallKind.POPC]
    assert unhandled(table) == ({CallKind.POPC}, {"popc"})


def test_every_recognised_callable_resolves_to_a_kind():
    keys = set(const_types._table().values())
    assert len(keys) > 100
    for key in keys:
        kind, _ = resolve(key)
        assert isinstance(kind, CallKind), key
    assert resolve("math.sin") == (CallKind.MATH, "sin")
    assert resolve("math.ldexp") == (CallKind.MATH_PARTS, "ldexp")
    assert resolve("npfloor") == (CallKind.NP_ROUNDING, "floor")
    assert resolve("atomic.cas0") == (CallKind.ATOMIC, "cas0")
    assert resolve("float") == (CallKind.CAST, "float")
    assert resolve("cg.grid_sync") == (CallKind.GRID_SYNC, None)


def test_every_kind_the_typer_dispatches_has_a_typer():
    typed_elsewhere = {CallKind.SHARED_ARRAY, CallKind.LOCAL_ARRAY, CallKind.CONST_ARRAY,
                       CallKind.GRID, CallKind.GRIDSIZE,       # constant arguments: calls.py
                       CallKind.WMMA_FRAGMENT,                 # likewise (calls_wmma.py)
                       CallKind.WGMMA_ACCUMULATOR,             # likewise (calls_wgmma.py)
                       CallKind.CARRAY, CallKind.FARRAY,       # likewise (calls.py)
                       CallKind.ISINSTANCE,                    # likewise (calls.py)
                       CallKind.CONJUGATE, CallKind.RESHAPE, CallKind.BIT_COUNT,   # methods
                       CallKind.ARRAY_VIEW, CallKind.ARRAY_COPY}
    covered = set(calls_impl._TYPERS) | set(calls_impl._OWN_CHECKS) | typed_elsewhere
    assert covered == set(CallKind)


def test_resolve_refuses_an_unknown_key():
    with pytest.raises(ValueError, match="nonsense"):
        resolve("nonsense")


class _StubTyper:
    """The parts of the typer ``calls.runtime.type_func`` uses before it types a call."""
    def __init__(self):
        self.tf = type("TF", (), {"info": {}})()

    def error(self, msg, node):
        return TypingError(msg)


def test_type_func_refuses_a_kind_it_does_not_type():
    node = ast.parse("f(1)").body[0].value
    with pytest.raises(TypingError, match=r"reshape\(\) is not supported in kernels"):
        calls_impl.type_func(_StubTyper(), node, Func("reshape"), [T.int64], {})


def test_func_knows_its_kind_and_refuses_an_unknown_key():
    f = Func("math.atan2")
    assert (f.key, f.kind, f.name) == ("math.atan2", CallKind.MATH, "atan2")
    with pytest.raises(ValueError, match="nonsense"):
        Func("nonsense")


def test_call_checks_its_kind_and_payload_type():
    assert Call(CallKind.CAST, Cast(T.float32)).data.target is T.float32
    assert Call(CallKind.POPC).data is None
    with pytest.raises(TypeError, match="CAST call carries a Cast"):
        Call(CallKind.CAST, T.float32)
    with pytest.raises(TypeError, match="POPC call carries a NoneType"):
        Call(CallKind.POPC, Cast(T.int32))
    with pytest.raises(TypeError, match="must be a CallKind"):
        Call("popc")


def _kernel(a, b, out):
    i = cuda.grid(1)
    s = cuda.shared.array(32, np.float32)
    s[0] = math.sin(a[i]) + np.floor(a[i]) + max(a[i], b[i]) + min((a[i], b[i]))
    cuda.atomic.add(out, 0, np.float32(a[i]))
    out[1] = cuda.shfl_down_sync(0xFFFFFFFF, a[i], 1) + float(cuda.popc(i))


def _records(tf):
    out = {}
    for node in ast.walk(tf.fsrc.node):
        c = call_of(tf, node)
        if c is not None:
            out.setdefault(ast.unparse(node.func), c)
    return out


def test_the_typer_records_kinds_with_typed_payloads():
    arr = T.Array(T.float32, 1, "C")
    rec = _records(infer(_kernel, (arr, arr, arr)))
    assert {name: c.kind for name, c in rec.items()} == {
        "cuda.grid": CallKind.GRID, "cuda.shared.array": CallKind.SHARED_ARRAY,
        "math.sin": CallKind.MATH, "np.floor": CallKind.NP_ROUNDING, "max": CallKind.MAX,
        "min": CallKind.MIN, "cuda.atomic.add": CallKind.ATOMIC,
        "np.float32": CallKind.CAST, "cuda.shfl_down_sync": CallKind.SHFL_DOWN_SYNC,
        "float": CallKind.CAST, "cuda.popc": CallKind.POPC}
    assert rec["cuda.grid"].data == GridAxes(1)
    spec = rec["cuda.shared.array"].data
    assert (spec.shape, spec.dtype, spec.dynamic) == ((32,), T.float32, False)
    assert rec["math.sin"].data == MathFunc("sin")
    assert rec["np.floor"].data == MathFunc("floor")
    # max of two float32 values: libdevice fmax (numba-cuda's lowering)
    assert rec["max"].data == Extremum(False, True) and rec["min"].data == Extremum(True)
    assert rec["cuda.atomic.add"].data == Atomic("add")
    assert rec["np.float32"].data == Cast(T.float32)
    assert rec["float"].data == Cast(T.float64)
    assert rec["cuda.shfl_down_sync"].data == ValueType(T.float32)
    assert rec["cuda.popc"].data is None


class _StubLowerer:
    """The parts of the NVVM lowerer ``lower_calls.call`` uses before a handler runs."""
    def __init__(self, info):
        self.tf = type("TF", (), {"info": info})()

    def error(self, msg, node):
        return CompileError(msg)


def test_lowering_refuses_an_unrecorded_call_and_an_iterator_called_as_a_value():
    node = ast.parse("f(1)").body[0].value
    with pytest.raises(CompileError, match=r"call of 'f' cannot be lowered"):
        lower_calls.call(_StubLowerer({}), node)
    with pytest.raises(CompileError, match=r"call of 'range' cannot be lowered"):
        lower_calls.call(_StubLowerer({node: Call(CallKind.RANGE)}), node)


def test_vector_executor_sends_a_refused_kind_per_thread():
    node = ast.parse("cuda.popc(i)").body[0].value
    with pytest.raises(vecexpr.Unsupported, match="call popc"):
        vecexpr._VCALLS[CallKind.POPC](None, node, Call(CallKind.POPC), None)
