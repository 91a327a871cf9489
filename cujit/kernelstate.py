"""Which simulated CUDA thread is running: the one piece of state that the kernel-API objects
(:mod:`cujit.kernelapi`) shares with the simulator.

``state.current`` is the simulator's object for the running thread, or None outside a kernel;
the simulator sets it when it switches threads.  Compiled kernels never read it.
"""

__all__ = ["state", "current_thread"]


class KernelState:
    """``current``: the simulator's running thread object, or None outside a kernel."""
    __slots__ = ("current",)

    def __init__(self):
        self.current = None


#: The process's one state: the simulated device runs one kernel at a time.
state = KernelState()


def current_thread(name):
    """The running simulated thread; ``RuntimeError`` naming ``cujit.<name>`` outside a
    kernel (the kernel API is compiled for the GPU or run by the simulator only)."""
    t = state.current
    if t is None:
        raise RuntimeError(f"cujit.{name} can only be used inside a kernel: it is compiled for "
                           "the GPU, or run by the simulator (CUJIT_ENABLE_CUDASIM=1)")
    return t
