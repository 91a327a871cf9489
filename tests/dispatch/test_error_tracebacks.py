"""A TypingError of a launch or of ``kernel.compile()`` reaches the user without the
compiler's frames (numba's rule), unless ``FULL_TRACEBACKS`` asks for them."""
import traceback

import numpy as np
import pytest

import cujit as cuda
from cujit.config import config
from cujit.nvvm import libnvvm as nvvm


def _kernel():
    def k(a):
        a[0] = undefined_name       # noqa: F821
    return cuda.jit(k)


def _frames(exc):
    return [f.name for f in traceback.extract_tb(exc.__traceback__)]


def _launch(k):
    with pytest.raises(cuda.TypingError, match="undefined_name") as info:
        k[1, 1](np.zeros(1))
    return info.value


def test_a_launch_raises_a_typing_error_without_the_compilers_frames():
    frames = _frames(_launch(_kernel()))
    assert frames[-1] == "_raise_short" and len(frames) <= 6, frames
    assert "infer" not in frames and "typecheck" not in frames


def test_full_tracebacks_keeps_the_compilers_frames(monkeypatch):
    monkeypatch.setattr(config, "FULL_TRACEBACKS", True)
    frames = _frames(_launch(_kernel()))
    assert len(frames) > 6 and frames[-1] != "_raise_short", frames


@pytest.mark.compile
@pytest.mark.skipif(not nvvm.nvvm_available(), reason="libNVVM wheel not installed")
def test_compile_raises_a_typing_error_without_the_compilers_frames():
    with pytest.raises(cuda.TypingError, match="undefined_name") as info:
        _kernel().compile("void(float64[:])")
    frames = _frames(info.value)
    assert frames[-1] == "_raise_short" and "infer" not in frames, frames
