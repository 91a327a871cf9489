"""Two GPUs, two processes, one answer: cujit kernels on each half, combined by
torch.distributed over NCCL on cujit device arrays shared zero-copy through DLPack.

    python examples/two_gpus_torch_distributed.py [n]

Each process (one per GPU) takes its half of ``x = arange(n) % 1000 / 1000`` (float32),
computes per-block partial sums of ``x * x`` with a cujit kernel into a cujit device array,
and hands that array to PyTorch with ``torch.from_dlpack`` (the same device memory, no copy).
``all_reduce`` sums the partials of both GPUs in place, so after it the cujit array holds the
combined partials; rank 0 adds them up and compares with the same computation on one GPU.

Prints ``two GPUs: <sum>``, ``one GPU: <sum>`` and ``equal: True``.  Needs two CUDA GPUs and
PyTorch with NCCL (it exits with status 2 and says why otherwise).  See docs/scaling.md.
"""
import os
import socket
import sys

import numpy as np

THREADS = 256


def _kernels(cuda):
    @cuda.jit
    def partial_sums(x, out):
        """out[b] = sum of x[i]**2 over block b's elements (a shared-memory tree)."""
        s = cuda.shared.array(THREADS, cuda.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        v = cuda.float32(0)
        if i < x.size:
            v = x[i] * x[i]
        s[t] = v
        cuda.syncthreads()
        k = THREADS // 2
        while k > 0:
            if t < k:
                s[t] += s[t + k]
            cuda.syncthreads()
            k //= 2
        if t == 0:
            out[cuda.blockIdx.x] = s[0]
    return partial_sums


def _data(n):
    return (np.arange(n, dtype=np.int64) % 1000 / 1000).astype(np.float32)


def _partials(cuda, kernel, x_host, blocks):
    """Per-block partial sums of one slice, as a cujit device array of ``blocks`` float32
    (blocks past the slice's end stay 0, so both ranks hold arrays of one length)."""
    d = cuda.to_device(x_host)
    out = cuda.device_array(blocks, np.float32)
    out[:] = 0
    used = (x_host.size + THREADS - 1) // THREADS
    kernel[used, THREADS](d, out[:used])
    cuda.synchronize()
    return out


def _worker(rank, world, port, n, results):
    import torch
    import torch.distributed as dist
    import cujit as cuda
    cuda.select_device(rank)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        kernel = _kernels(cuda)
        x = _data(n)
        half = (n + world - 1) // world
        mine = x[rank * half:(rank + 1) * half]
        blocks = (half + THREADS - 1) // THREADS
        part = _partials(cuda, kernel, mine, blocks)
        t = torch.from_dlpack(part)                 # zero copy: same device memory
        assert t.data_ptr() == part.device_ctypes_pointer.value
        dist.all_reduce(t, op=dist.ReduceOp.SUM)    # NCCL, in place, on cujit's memory
        torch.cuda.synchronize()
        if rank == 0:
            combined = part.copy_to_host()
            # the same computation on one GPU: one kernel over each half, the partials added
            # in float32 as NCCL adds them (0 + p0 + p1), so the answers are bit for bit equal
            one = np.zeros(blocks, np.float32)
            for r in range(world):
                one += _partials(cuda, kernel, x[r * half:(r + 1) * half], blocks).copy_to_host()
            results.put((float(combined.astype(np.float64).sum()),
                         float(one.astype(np.float64).sum()),
                         bool(np.array_equal(combined, one))))
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 1 << 22
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        print(f"needs PyTorch: {exc}", file=sys.stderr)
        return 2
    if not (torch.cuda.is_available() and torch.cuda.device_count() >= 2
            and dist.is_nccl_available()):
        print("needs two CUDA GPUs and PyTorch built with NCCL", file=sys.stderr)
        return 2
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, 2, port, n, results)) for r in range(2)]
    for p in procs:
        p.start()
    two, one, equal = results.get(timeout=300)
    for p in procs:
        p.join(120)
    if any(p.exitcode != 0 for p in procs):
        print(f"a worker failed: exit codes {[p.exitcode for p in procs]}", file=sys.stderr)
        return 1
    print(f"two GPUs: {two:.6f}")
    print(f"one GPU: {one:.6f}")
    print(f"equal: {equal}")
    return 0 if equal else 1


if __name__ == "__main__":
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")     # NVLink multicast off (see docs)
    sys.exit(main(sys.argv))
