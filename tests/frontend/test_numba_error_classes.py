"""cujit's compile errors are also Numba's classes when the program has imported Numba
(``numba.core.errors`` in ``sys.modules``), and only then: ``except
numba.core.errors.TypingError`` catches cujit's refusals as it catches numba-cuda's.

Numba is not installed in CI, so a stand-in ``numba.core.errors`` with Numba's class shapes
(``NumbaError.__init__(msg, loc=None, highlighting=True)`` rewrites ``.msg``) is put in
``sys.modules`` for the tests that need it."""
import pickle
import sys
import types

import pytest

import cujit as cuda
from cujit.frontend.errors import (CompileError, RequireLiteralValue, SourceLocation,
                                   TypingError)


def numba_errors_module():
    class NumbaError(Exception):
        def __init__(self, msg, loc=None, highlighting=True):
            self.msg = "numba rewrote this"
            self.loc = "numba's loc"
            super().__init__(msg)

    class NumbaTypingError(NumbaError):
        pass

    class NumbaRequireLiteralValue(NumbaTypingError):
        pass

    mod = types.ModuleType("numba.core.errors")
    mod.NumbaError = NumbaError
    mod.TypingError = NumbaTypingError
    mod.RequireLiteralValue = NumbaRequireLiteralValue
    return mod


@pytest.fixture
def numba_errors(monkeypatch):
    mod = numba_errors_module()
    monkeypatch.setitem(sys.modules, "numba.core.errors", mod)
    return mod


def k_grid_variable(a, n):
    i = cuda.grid(n)
    a[0] = i


def test_without_numba_the_errors_are_cujits_own_classes(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba.core.errors", raising=False)
    e = TypingError("bad")
    assert type(e) is TypingError
    assert type(RequireLiteralValue("x")) is RequireLiteralValue


def test_typing_error_is_numbas_typing_error_when_numba_is_imported(numba_errors):
    loc = SourceLocation("k.py", 3, 4, "    a = b\n")
    e = TypingError("bad thing", loc)
    assert isinstance(e, TypingError) and isinstance(e, numba_errors.TypingError)
    assert type(e).__name__ == "TypingError"
    # cujit's attributes, not those Numba's __init__ would have set
    assert e.msg == "bad thing" and e.loc is loc
    assert str(e).startswith('bad thing\nFile "k.py", line 3, column 5')
    with pytest.raises(numba_errors.TypingError, match="bad thing"):
        raise e


def test_one_dual_class_per_numba_class(numba_errors):
    assert type(TypingError("a")) is type(TypingError("b"))
    other = numba_errors_module()
    sys.modules["numba.core.errors"] = other
    e = TypingError("c")
    assert isinstance(e, other.TypingError)
    assert not isinstance(e, numba_errors.TypingError)


def test_require_literal_value_is_numbas_and_a_typing_error(numba_errors):
    e = RequireLiteralValue("n must be a constant")
    assert isinstance(e, numba_errors.RequireLiteralValue)
    assert isinstance(e, numba_errors.TypingError)
    assert isinstance(e, TypingError)


def test_compile_error_has_no_numba_class(numba_errors):
    assert type(CompileError("x")) is CompileError


def test_dual_class_pickles_by_cujits_class(numba_errors):
    e = TypingError("bad", SourceLocation("k.py", 2, 0))
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e)
    assert (back.msg, back.args, repr(back.loc)) == ("bad", e.args, "k.py:2:1")


def test_plain_class_pickles(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba.core.errors", raising=False)
    back = pickle.loads(pickle.dumps(TypingError("bad")))
    assert type(back) is TypingError and back.msg == "bad"


def test_variable_grid_argument_is_require_literal_value(numba_errors):
    with pytest.raises(numba_errors.RequireLiteralValue,
                       match="RequireLiteralValue") as ei:
        cuda.jit("void(int32[::1], int32)")(k_grid_variable)
    assert isinstance(ei.value, TypingError)
    assert "the argument of grid must be a compile-time constant" in str(ei.value)
    assert "'n' is not" in str(ei.value)
