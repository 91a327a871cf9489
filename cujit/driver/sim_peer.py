"""The simulated driver's devices and peer access: how many devices it reports
(``config.SIM_DEVICES``, ``CUJIT_SIM_DEVICES``, default 1), their primary-context handles, and
peer access and peer copies between them (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess,
cuMemcpyPeer[Async]), with the same error codes a GPU gives.

Every simulated device can access every other one (as two NVLink-connected H200s do); the
devices share one address space, as with unified addressing, so a peer copy is a byte copy
checked like every other copy (live memory, stream, graph capture) plus a check that each
pointer belongs to the context it was given with.  Mixed into :class:`~cujit.driver.sim.SimDriver`.
"""
from ..config import config
from .errors import (CudaAPIError, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_DEVICE,
                     CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_ILLEGAL_ADDRESS)

__all__ = ["SimDevices", "CTX_BASE"]

#: Primary-context handle of simulated device 0; device ``i`` has ``CTX_BASE + i * CTX_STEP``.
CTX_BASE = 0x0C7C0000
CTX_STEP = 0x100


def _raise(code, call, msg=""):
    raise CudaAPIError(code, msg, call)


class SimDevices:
    """Device count, context handles and peer access of the simulated driver (a mixin: it
    uses the SimDriver's ``_ctx_live``, ``_current``, ``_peer_enabled``, ``_find`` and
    ``_copy``)."""

    def get_device_count(self):
        return int(config.SIM_DEVICES)

    def _check_ordinal(self, ordinal, call, code=101):
        n = self.get_device_count()
        if isinstance(ordinal, bool) or not hasattr(ordinal, "__index__") \
                or not 0 <= ordinal < n:
            _raise(code, call, f"device ordinal {ordinal!r}; the simulator has {n} device(s) "
                   f"(0..{n - 1}, CUJIT_SIM_DEVICES)")

    @staticmethod
    def _ctx_handle(ordinal):
        return CTX_BASE + int(ordinal) * CTX_STEP

    @staticmethod
    def _ctx_ordinal(ctx):
        return (ctx - CTX_BASE) // CTX_STEP

    def _current_ctx(self):
        """The calling thread's current context handle (device 0's when it never set one)."""
        return getattr(self._current, "ctx", CTX_BASE)

    def device_can_access_peer(self, ordinal, peer_ordinal):
        self._check_ordinal(ordinal, "cuDeviceCanAccessPeer", CUDA_ERROR_INVALID_DEVICE)
        self._check_ordinal(peer_ordinal, "cuDeviceCanAccessPeer", CUDA_ERROR_INVALID_DEVICE)
        return int(ordinal) != int(peer_ordinal)

    def ctx_enable_peer_access(self, peer_ctx):
        call = "cuCtxEnablePeerAccess"
        cur = self._current_ctx()
        if peer_ctx not in self._ctx_live:
            _raise(CUDA_ERROR_INVALID_CONTEXT, call, f"peer context {peer_ctx!r} does not exist")
        if peer_ctx == cur:
            _raise(CUDA_ERROR_INVALID_CONTEXT, call,
                   f"peer context {peer_ctx:#x} is the current context")
        if not SimDevices.device_can_access_peer(self, self._ctx_ordinal(cur),
                                                 self._ctx_ordinal(peer_ctx)):
            _raise(CUDA_ERROR_INVALID_DEVICE, call, "the devices cannot access each other")
        with self._lock:
            if (cur, peer_ctx) in self._peer_enabled:
                return False
            self._peer_enabled.add((cur, peer_ctx))
            return True

    def peer_access_enabled(self, ctx, peer_ctx):
        """Simulator only: True once ``ctx`` enabled access to ``peer_ctx``'s memory."""
        return (ctx, peer_ctx) in self._peer_enabled

    def check_kernel_access(self, ptr, name):
        """Simulator only: raise CudaAPIError CUDA_ERROR_ILLEGAL_ADDRESS when ``ptr`` (int, a
        kernel argument ``name``'s data) is device memory of another device whose context the
        current one has not been given peer access to: on a GPU that kernel faults."""
        if len(self._ctx_live) < 2:         # one context retained: nothing to cross
            return
        b = self._find(ptr)
        if b is None or b.kind not in ("device", "pool"):
            return
        cur = self._current_ctx()
        if b.ctx != cur and (cur, b.ctx) not in self._peer_enabled:
            _raise(CUDA_ERROR_ILLEGAL_ADDRESS, "cuLaunchKernel",
                   f"argument {name!r} ({ptr:#x}) is memory of device "
                   f"{self._ctx_ordinal(b.ctx)}, but the kernel runs on device "
                   f"{self._ctx_ordinal(cur)} without peer access to it: copy it "
                   "(dst.copy_to_device(src)) or call "
                   f"gpus[{self._ctx_ordinal(cur)}].get_primary_context().enable_peer_access("
                   f"gpus[{self._ctx_ordinal(b.ctx)}].get_primary_context()) first")

    def pointer_device(self, ptr):
        b = self._find(ptr)
        if b is None or b.kind not in ("device", "pool"):
            _raise(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute",
                   f"{ptr:#x} is not simulated device memory")
        return self._ctx_ordinal(b.ctx)

    def memcpy_peer(self, dst, dst_ctx, src, src_ctx, nbytes, stream=0):
        call = "cuMemcpyPeer"
        for role, ctx in (("destination", dst_ctx), ("source", src_ctx)):
            if ctx not in self._ctx_live:
                _raise(CUDA_ERROR_INVALID_CONTEXT, call, f"{role} context {ctx!r} does not exist")
        if nbytes:
            for role, ptr, ctx in (("destination", dst, dst_ctx), ("source", src, src_ctx)):
                b = self._find(ptr)
                if b is not None and b.kind in ("device", "pool") and b.ctx != ctx:
                    _raise(CUDA_ERROR_INVALID_VALUE, call,
                           f"{role} {ptr:#x} belongs to context {b.ctx:#x} (device "
                           f"{self._ctx_ordinal(b.ctx)}), not to the given {ctx:#x}")
        self._copy(dst, src, nbytes, stream, call, False, False)
