"""Kernels that several test files use, written once (plain functions: a test jits them,
launches them through the simulator fixture, or compiles them to PTX).

``matmul_tiled(A, B, C)``: C = A @ B for float32 2-D arrays of any shape, through two
``TPB``×``TPB`` static shared tiles and two barriers per step (numba.cuda's documented "fast
matrix multiplication"); launch it with blocks of (TPB, TPB) threads covering C, x along
columns and y along rows.

``records_in_shared(out)``: numba's bug-report case 6, nested records and record arrays in
static shared memory (``REC_OUTER``), writing 45.0, 45.0, 5.0 into float64 ``out``.

``loops(out, n, step)``: Python's loop forms (ranges up and down, ``continue``/``break``,
``for``/``while`` with ``else``) writing six int64 results; see its docstring.

:func:`benchmark_kernels`: the benchmark kernels of ``benchmarks/kernels.py`` built for cujit,
so tests check the very source that is benchmarked; :func:`example`: the kernels of an
``examples/*.py`` script (the seed guide's programs among them), so tests check what users
read.
"""
import functools
import importlib.util
import pathlib

import numpy as np

import cujit as cuda

_ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Tile edge: small, so simulated launches stay quick.
TPB = 8


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array((TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = np.float32(0.0)
    for i in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + i * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and ty + i * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


def loops(out, n, step):
    """``out[0]`` = sum(range(n, 0, -1)); ``out[1]`` = len(range(0, n, step)); ``out[2]`` = 72
    and ``out[3]`` = 23 (a for-else left by ``break``); ``out[4]`` = the first multiple of 3
    >= n, plus 100 (while-else); ``out[5]`` = len(range(n, -n, -step))."""
    t = 0
    for i in range(n, 0, -1):
        t += i
    out[0] = t
    t = 0
    for i in range(0, n, step):
        t += 1
    out[1] = t
    t = 0
    for i in range(2, 100, 3):
        if i == 5:
            continue
        if i > 20:
            break
        t += i
    else:
        t = -1
    out[2] = t
    out[3] = i
    k = 0
    while k < n:
        k += 3
    else:
        k += 100
    out[4] = k
    t = 0
    for j in range(n, -n, -step):
        t += 1
    out[5] = t


@functools.lru_cache(maxsize=None)
def benchmark_kernels():
    """``(module, kernels)``: ``benchmarks/kernels.py`` loaded once (``module.TPB``,
    ``module.RED_TPB``) and its ``build(cujit)`` dict of dispatchers (``'empty1'``,
    ``'empty5'``, ``'axpy'``, ``'matmul'``, ``'reduce'``, ``'stencil'``; ``.py_func`` is the
    plain function)."""
    mod = _load(_ROOT / "benchmarks" / "kernels.py", "cujit_benchmark_kernels")
    return mod, mod.build(cuda)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.lru_cache(maxsize=None)
def example(name):
    """The module of ``examples/<name>.py``, loaded once (its script part runs only under
    ``__main__``); its kernels are cujit dispatchers (``.py_func``: the plain function)."""
    return _load(_ROOT / "examples" / f"{name}.py", f"cujit_example_{name}")


REC_INNER = np.dtype([("x", np.float32), ("y", np.float32)])
REC_OUTER = np.dtype([("a", np.float32, (3,)), ("n", REC_INNER), ("v", np.float64)])


def records_in_shared(out):
    s = cuda.shared.array(2, dtype=REC_OUTER)
    s[0].a[1] = 45.0
    s[0]["v"] = 45.0
    s[0].n.x = 2.0
    s[0].n.y = 3.0
    cuda.syncthreads()
    out[0] = s[0].a[1]
    out[1] = s[0].v
    out[2] = s[0].n.x + s[0].n.y
