"""Demo 1: the seed guide's dynamic shared memory examples.

Every ``shared.array(0, dtype)`` in a kernel names the same dynamic shared memory, whatever
its dtype (CUDA's single ``extern __shared__`` array), so writing float32 3.14 and reading it
back as int32 gives its bit pattern 1078523331.  Disjoint regions come from slicing:
``shared.array(0, int32)[1:]`` starts 4 bytes in.  The kernels write what they read into small
output arrays, which the host checks (the seed prints from the kernel instead).
"""
import numpy as np

from ._common import Result, Timer, jit_with

cuda = None  # each kernel's own globals bind it (_common.jit_with)

__all__ = ["run", "make_kernels", "ALIAS_BITS"]

#: float32(3.14) viewed as int32 — what the aliasing kernel must read back.
ALIAS_BITS = int(np.array([3.14], dtype=np.float32).view(np.int32)[0])


def make_kernels(cuda_module):
    """``(aliased, disjoint)``: the two kernels ``k(out_f, out_i)`` (float32[1], int32[1]
    outputs) for module ``cuda_module``; launch with 4 and 8 bytes of dynamic shared memory."""
    # the kernels name ``cuda`` as a module global, as user code does (see jit_with)
    jit = jit_with(cuda_module)

    @jit
    def aliased(out_f, out_i):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)
        f32_arr[0] = 3.14
        out_f[0] = f32_arr[0]
        out_i[0] = i32_arr[0]

    @jit
    def disjoint(out_f, out_i):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]
        f32_arr[0] = 3.14
        i32_arr[0] = 1
        out_f[0] = f32_arr[0]
        out_i[0] = i32_arr[0]

    return aliased, disjoint


def run(cuda, sizes):
    """Run both seed examples; PASS when they read back (3.14, 1078523331) and (3.14, 1).

    ``sizes`` is unused (the examples are one thread with 4 and 8 bytes of dynamic shared
    memory, launched as ``[1, 1, 0, nbytes]``)."""
    aliased, disjoint = make_kernels(cuda)
    res = Result("seed: dynamic shared memory", "4 B + 8 B dynamic shared")
    ok = True
    with Timer() as t:
        for kern, nbytes, want_i, label in ((aliased, 4, ALIAS_BITS, "aliased"),
                                            (disjoint, 8, 1, "disjoint [1:]")):
            out_f = cuda.to_device(np.zeros(1, np.float32))
            out_i = cuda.to_device(np.zeros(1, np.int32))
            kern[1, 1, 0, nbytes](out_f, out_i)
            cuda.synchronize()
            f, i = float(out_f.copy_to_host()[0]), int(out_i.copy_to_host()[0])
            good = abs(f - 3.14) < 1e-6 and i == want_i
            ok &= good
            res.lines.append(f"{label:>14}: f32_arr[0] = {f:.6f}  i32_arr[0] = {i}"
                             f"   (expected 3.140000 {want_i}) {'ok' if good else 'WRONG'}")
    res.seconds = t.seconds
    res.passed = ok
    return res
