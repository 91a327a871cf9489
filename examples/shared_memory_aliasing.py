"""The seed guide's dynamic shared memory examples, as written there.

Every ``cuda.shared.array(0, dtype)`` in a kernel is the same dynamic shared memory (sized by
the 4th launch-configuration value, in bytes), whatever its dtype.  Writing float32 3.14 and
reading the int32 view gives 1078523331, the bit pattern of 3.14.  Slicing gives disjoint
regions: ``shared.array(0, int32)[1:]`` starts 4 bytes in.

Run: ``python examples/shared_memory_aliasing.py`` (``CUJIT_ENABLE_CUDASIM=1`` without a GPU).
Prints 3.14 and 1078523331, then 3.14 and 1 (the GPU's printf writes 3.140000).
"""
import numpy as np

import cujit as cuda


@cuda.jit
def f():
    f32_arr = cuda.shared.array(0, dtype=np.float32)
    i32_arr = cuda.shared.array(0, dtype=np.int32)
    f32_arr[0] = 3.14
    print(f32_arr[0])
    print(i32_arr[0])


@cuda.jit
def f_with_view():
    f32_arr = cuda.shared.array(0, dtype=np.float32)
    i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]    # 1 int32 = 4 bytes in
    f32_arr[0] = 3.14
    i32_arr[0] = 1
    print(f32_arr[0])
    print(i32_arr[0])


if __name__ == "__main__":
    f[1, 1, 0, 4]()              # 4 bytes: one float32 or one int32, the same bytes
    cuda.synchronize()
    f_with_view[1, 1, 0, 8]()    # 8 bytes: float32 in the first 4, int32 in the next 4
    cuda.synchronize()
