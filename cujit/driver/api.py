"""The one interface between cujit and a CUDA driver.

Two backends implement it: :mod:`cujit.driver.cuda` (the real driver through
``cuda.bindings.driver``) and :mod:`cujit.driver.sim` (a fake driver over host memory).
Everything above this layer — contexts, the pending-deallocations queue, memory managers,
arrays, streams, launches — is the same code on both.

Conventions
-----------
- Pointers (device and host) and handles (stream, event, module, function, context, memory
  pool) are Python ``int``; 0 is NULL.  Stream handle 0 is the default stream, 1 is
  ``CU_STREAM_LEGACY`` and 2 is ``CU_STREAM_PER_THREAD``.
- Sizes are bytes.  ``stream=0`` on a copy means the synchronous form of the call; any other
  handle queues the copy on that stream.
- Errors are :class:`~cujit.driver.errors.CudaAPIError` carrying the CUresult code and the name
  of the driver call that failed.  A missing driver is
  :class:`~cujit.driver.errors.CudaSupportError` (raised by :func:`cujit.driver.get_driver`).
"""

__all__ = ["Driver", "DEVICE_ATTRIBUTES", "STATIC_SHARED_LIMIT"]

#: Static shared memory one block may use, in bytes: 48 KiB on every architecture (CUDA C++
#: Programming Guide, "Shared Memory": more needs dynamic shared memory and the opt-in
#: attribute).  The one copy of this number: the compiler, the simulator and the simulated
#: device's MAX_SHARED_MEMORY_PER_BLOCK read it here.
STATIC_SHARED_LIMIT = 48 * 1024

# Device attribute names understood by ``Driver.device_attribute`` (CU_DEVICE_ATTRIBUTE_<name>).
DEVICE_ATTRIBUTES = (
    "MAX_THREADS_PER_BLOCK", "MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y", "MAX_BLOCK_DIM_Z",
    "MAX_GRID_DIM_X", "MAX_GRID_DIM_Y", "MAX_GRID_DIM_Z", "MAX_SHARED_MEMORY_PER_BLOCK",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "TOTAL_CONSTANT_MEMORY", "WARP_SIZE",
    "MAX_REGISTERS_PER_BLOCK", "CLOCK_RATE", "MULTIPROCESSOR_COUNT", "CAN_MAP_HOST_MEMORY",
    "COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR", "UNIFIED_ADDRESSING",
    "MANAGED_MEMORY", "CONCURRENT_MANAGED_ACCESS", "MEMORY_POOLS_SUPPORTED", "ASYNC_ENGINE_COUNT",
    "PCI_BUS_ID", "PCI_DEVICE_ID", "PCI_DOMAIN_ID", "MEMORY_CLOCK_RATE",
    "GLOBAL_MEMORY_BUS_WIDTH", "L2_CACHE_SIZE", "MAX_THREADS_PER_MULTIPROCESSOR",
    "INTEGRATED", "ECC_ENABLED", "CONCURRENT_KERNELS", "PAGEABLE_MEMORY_ACCESS",
)


class Driver:
    """Abstract driver.  Every method below is implemented by both backends."""

    #: 'cuda' or 'sim'
    name = "abstract"
    #: True for the simulator's fake driver
    is_simulator = False

    # -- the warm launch (dispatch/launcher.py generates a function around these) ----------
    #: ``raw_launch(function_ref, gx, gy, gz, bx, by, bz, shared_bytes, stream_ref, params,
    #: extra) -> (err,)``: cuLaunchKernel as bound from the bindings, its CUresult returned
    #: unchecked (the caller raises), so a warm launch is one C call.  None where the backend
    #: has no such call (the simulator): launches then always go through launch_kernel.
    raw_launch = None
    #: Maps a function handle (int) to the object ``raw_launch`` takes (``CUfunction``);
    #: None: the int itself.
    function_ref = None
    #: Maps a stream handle (int) to the object ``raw_launch`` takes (``CUstream``); None:
    #: the int itself.
    stream_ref = None

    def raw_function(self, name):
        """The CUDA driver API function ``name`` (``'cuMemGetInfo'``) as a Python callable
        taking cuda-bindings' arguments: it raises CudaAPIError for an error result and
        returns the other results (None, the one value, or a tuple).  For numba's
        ``cudadrv.driver.driver.cu*`` attributes; cujit's own code never calls it.
        AttributeError where the backend has no such function (the simulator has none)."""
        where = "the simulator" if self.is_simulator else f"the {self.name} driver backend"
        raise AttributeError(f"{name!r}: {where} has no raw CUDA driver functions (they exist "
                             "on a GPU, through cuda-bindings)")

    def bindings_module(self):
        """The ``cuda.bindings.driver`` module this backend calls (numba's
        ``cudadrv.driver.binding``: its types, ``CUdevice``, ``CUresult``... and functions
        returning ``(err, ...)``), for ported code; cujit's own code never uses it.
        AttributeError where the backend has none (the simulator)."""
        where = "the simulator" if self.is_simulator else f"the {self.name} driver backend"
        raise AttributeError(f"{where} has no cuda.bindings.driver module (numba's "
                             "cudadrv.driver.binding exists on a GPU)")

    # -- versions and devices ------------------------------------------------------------
    def driver_version(self):
        """CUDA driver version as an int, e.g. 13000 (cuDriverGetVersion)."""
        raise NotImplementedError

    def get_device_count(self):
        """Number of devices (cuDeviceGetCount)."""
        raise NotImplementedError

    def device_name(self, ordinal):
        """Device name, str (cuDeviceGetName)."""
        raise NotImplementedError

    def device_uuid(self, ordinal):
        """Device UUID as a 'GPU-xxxxxxxx-...' str (cuDeviceGetUuid)."""
        raise NotImplementedError

    def device_total_memory(self, ordinal):
        """Total device memory in bytes (cuDeviceTotalMem)."""
        raise NotImplementedError

    def device_attribute(self, ordinal, name):
        """Integer attribute ``name`` (one of DEVICE_ATTRIBUTES) of device ``ordinal``."""
        raise NotImplementedError

    # -- contexts ------------------------------------------------------------------------
    def primary_ctx_retain(self, ordinal):
        """Retain the device's primary context, return its handle (cuDevicePrimaryCtxRetain)."""
        raise NotImplementedError

    def primary_ctx_release(self, ordinal):
        """Release one retain of the primary context (cuDevicePrimaryCtxRelease)."""
        raise NotImplementedError

    def primary_ctx_reset(self, ordinal):
        """Destroy every allocation and resource of the primary context (cuDevicePrimaryCtxReset)."""
        raise NotImplementedError

    def ctx_set_current(self, ctx):
        """Make context ``ctx`` current for the calling thread (cuCtxSetCurrent); 0 leaves the
        thread without a current context (NULL)."""
        raise NotImplementedError

    def ctx_get_current(self):
        """The handle (int) of the calling thread's current context, 0 when it has none
        (cuCtxGetCurrent)."""
        raise NotImplementedError

    def ctx_pop_current(self):
        """Pop the calling thread's current context off its context stack; return its handle,
        0 when there was none (cuCtxPopCurrent)."""
        raise NotImplementedError

    def ctx_synchronize(self):
        """Wait for all work of the current context (cuCtxSynchronize)."""
        raise NotImplementedError

    def device_can_access_peer(self, ordinal, peer_ordinal):
        """True when contexts on device ``ordinal`` can access memory of device
        ``peer_ordinal`` directly, once enabled (cuDeviceCanAccessPeer; False for the same
        device)."""
        raise NotImplementedError

    def ctx_enable_peer_access(self, peer_ctx):
        """Let the *current* context access memory of context ``peer_ctx`` (cuCtxEnablePeerAccess,
        flags 0).  Returns True when this call enabled it, False when it already was
        (CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED is not an error); other CUresults raise, e.g.
        CUDA_ERROR_INVALID_DEVICE when the devices cannot access each other and
        CUDA_ERROR_INVALID_CONTEXT when ``peer_ctx`` is the current context."""
        raise NotImplementedError

    def profiler_start(self):
        """Enable profile collection by an attached profiler (cuProfilerStart)."""
        raise NotImplementedError

    def profiler_stop(self):
        """Disable profile collection and flush its buffers (cuProfilerStop)."""
        raise NotImplementedError

    # -- memory --------------------------------------------------------------------------
    def mem_alloc(self, nbytes):
        """Allocate device memory, return the device pointer (cuMemAlloc)."""
        raise NotImplementedError

    def mem_free(self, ptr):
        """Free device or managed memory (cuMemFree)."""
        raise NotImplementedError

    def mem_alloc_managed(self, nbytes, attach_global=True):
        """Allocate managed memory, return its pointer, valid on host and device (cuMemAllocManaged)."""
        raise NotImplementedError

    def mem_host_alloc(self, nbytes, mapped=False, portable=False, wc=False):
        """Allocate page-locked host memory, return the host pointer (cuMemHostAlloc)."""
        raise NotImplementedError

    def mem_free_host(self, ptr):
        """Free memory from mem_host_alloc (cuMemFreeHost)."""
        raise NotImplementedError

    def mem_host_register(self, ptr, nbytes, mapped=False, portable=False):
        """Page-lock existing host memory (cuMemHostRegister)."""
        raise NotImplementedError

    def mem_host_unregister(self, ptr):
        """Undo mem_host_register (cuMemHostUnregister)."""
        raise NotImplementedError

    def mem_host_get_device_pointer(self, host_ptr):
        """Device pointer of mapped host memory (cuMemHostGetDevicePointer)."""
        raise NotImplementedError

    def mem_get_info(self):
        """``(free, total)`` bytes of device memory (cuMemGetInfo)."""
        raise NotImplementedError

    def mem_get_address_range(self, ptr):
        """``(base, size)`` of the allocation containing device pointer ``ptr`` (cuMemGetAddressRange)."""
        raise NotImplementedError

    def pointer_device(self, ptr):
        """Ordinal (int) of the device whose memory holds device pointer ``ptr`` (the device of
        its context, cuPointerGetAttribute CU_POINTER_ATTRIBUTE_CONTEXT + cuCtxGetDevice; the
        DEVICE_ORDINAL attribute for context-less pool memory); CudaAPIError
        (INVALID_VALUE) for an address the driver does not know."""
        raise NotImplementedError

    def device_mempool(self, ordinal):
        """Handle of the device's default memory pool (cuDeviceGetDefaultMemPool)."""
        raise NotImplementedError

    def mempool_set_release_threshold(self, pool, nbytes):
        """Set CU_MEMPOOL_ATTR_RELEASE_THRESHOLD of ``pool`` (cuMemPoolSetAttribute)."""
        raise NotImplementedError

    def mempool_trim(self, pool, keep_bytes=0):
        """Release pool memory down to ``keep_bytes`` (cuMemPoolTrimTo)."""
        raise NotImplementedError

    def mem_alloc_from_pool_async(self, nbytes, pool, stream):
        """Stream-ordered allocation from ``pool`` (cuMemAllocFromPoolAsync)."""
        raise NotImplementedError

    def mem_free_async(self, ptr, stream):
        """Stream-ordered free (cuMemFreeAsync)."""
        raise NotImplementedError

    # -- copies and sets -----------------------------------------------------------------
    def memcpy_htod(self, dst, src, nbytes, stream=0):
        """Host pointer ``src`` -> device pointer ``dst`` (cuMemcpyHtoD[Async])."""
        raise NotImplementedError

    def memcpy_dtoh(self, dst, src, nbytes, stream=0):
        """Device pointer ``src`` -> host pointer ``dst`` (cuMemcpyDtoH[Async])."""
        raise NotImplementedError

    def memcpy_dtod(self, dst, src, nbytes, stream=0):
        """Device -> device (cuMemcpyDtoD[Async])."""
        raise NotImplementedError

    def memcpy(self, dst, src, nbytes, stream=0):
        """Any pointers, direction inferred from the addresses (cuMemcpy[Async])."""
        raise NotImplementedError

    def memcpy_peer(self, dst, dst_ctx, src, src_ctx, nbytes, stream=0):
        """Device pointer ``src`` of context ``src_ctx`` -> device pointer ``dst`` of context
        ``dst_ctx`` (cuMemcpyPeerAsync on ``stream``; cuMemcpyPeer, ordered after all work of
        both contexts, when ``stream`` is 0).  Direct over the devices' link once peer access
        is enabled, staged through the host otherwise."""
        raise NotImplementedError

    def memcpy_2d(self, dst, dst_pitch, src, src_pitch, width, height, stream=0):
        """Copy ``height`` rows of ``width`` bytes; rows ``*_pitch`` bytes apart; any pointer kinds
        (cuMemcpy2DUnaligned / cuMemcpy2DAsync with CU_MEMORYTYPE_UNIFIED)."""
        raise NotImplementedError

    def memset_d8(self, ptr, value, nbytes, stream=0):
        """Set ``nbytes`` bytes at device pointer ``ptr`` to ``value`` (cuMemsetD8[Async])."""
        raise NotImplementedError

    # -- streams and events --------------------------------------------------------------
    def stream_create(self, non_blocking=False, priority=0):
        """New stream handle (cuStreamCreateWithPriority)."""
        raise NotImplementedError

    def stream_destroy(self, stream):
        """cuStreamDestroy."""
        raise NotImplementedError

    def stream_synchronize(self, stream):
        """Block until the stream's work is done (cuStreamSynchronize; releases the GIL)."""
        raise NotImplementedError

    def stream_query(self, stream):
        """True when all work on the stream is done (cuStreamQuery)."""
        raise NotImplementedError

    def stream_wait_event(self, stream, event):
        """Make later work on ``stream`` wait for ``event`` (cuStreamWaitEvent)."""
        raise NotImplementedError

    def launch_host_func(self, stream, fn):
        """Run ``fn()`` (no arguments) after the stream's earlier work (cuLaunchHostFunc).

        ``fn`` runs on a driver thread and must not call CUDA; the backend keeps ``fn`` alive
        until it has run.  Exceptions from ``fn`` are the caller's to catch inside ``fn``."""
        raise NotImplementedError

    def event_create(self, timing=True, blocking=False, interprocess=False):
        """New event handle (cuEventCreate)."""
        raise NotImplementedError

    def event_destroy(self, event):
        """cuEventDestroy."""
        raise NotImplementedError

    def event_record(self, event, stream=0):
        """cuEventRecord."""
        raise NotImplementedError

    def event_synchronize(self, event):
        """cuEventSynchronize."""
        raise NotImplementedError

    def event_query(self, event):
        """True when the event has completed (cuEventQuery)."""
        raise NotImplementedError

    def event_elapsed_time(self, start, end):
        """Milliseconds between two recorded events, float (cuEventElapsedTime)."""
        raise NotImplementedError

    # -- modules and launches ------------------------------------------------------------
    def module_load_data(self, image):
        """Load a cubin/fatbin (bytes) or NUL-terminated PTX (bytes) (cuModuleLoadData)."""
        raise NotImplementedError

    def module_unload(self, module):
        """cuModuleUnload."""
        raise NotImplementedError

    def module_get_function(self, module, name):
        """Function handle for kernel ``name`` (str) (cuModuleGetFunction)."""
        raise NotImplementedError

    def module_get_global(self, module, name):
        """``(device_ptr, nbytes)`` of global ``name`` (cuModuleGetGlobal)."""
        raise NotImplementedError

    def library_load(self, image, name=""):
        """Load a cubin, fatbin or PTX image (bytes) as a context-independent CUDA library
        (cuLibraryLoadData) through cuda.core's ``ObjectCode`` → that ObjectCode, loaded
        (its ``handle`` is the ``CUlibrary``).  The library stays loaded while the
        ObjectCode lives; cuda.core unloads it (cuLibraryUnload) when it dies.  ``name``
        (str): what cuda.core's messages call it.  CudaSupportError when cuda.core is not
        installed; CudaAPIError when the image does not load."""
        raise NotImplementedError

    def library_get_kernel(self, library, name):
        """The cuda.core ``Kernel`` of entry point ``name`` (str) in ``library`` (an
        ObjectCode from :meth:`library_load`) (cuLibraryGetKernel); CudaAPIError when there
        is none."""
        raise NotImplementedError

    def kernel_get_function(self, kernel):
        """Function handle (int) of ``kernel`` (a cuda.core ``Kernel``) in the current
        context, for the cuFunc* and cuLaunchKernel calls (cuKernelGetFunction)."""
        raise NotImplementedError

    def library_get_global(self, library, name):
        """``(device_ptr, nbytes)`` of global ``name`` (str) of ``library`` (an ObjectCode
        from :meth:`library_load`) in the current context (cuLibraryGetGlobal)."""
        raise NotImplementedError

    def func_get_attribute(self, func, name):
        """CU_FUNC_ATTRIBUTE_<name> of a function, int (cuFuncGetAttribute)."""
        raise NotImplementedError

    def func_set_attribute(self, func, name, value):
        """Set CU_FUNC_ATTRIBUTE_<name> (cuFuncSetAttribute)."""
        raise NotImplementedError

    def launch_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream, params):
        """cuLaunchKernel; ``params`` is the address (int) of a ``void*[]`` of argument pointers."""
        raise NotImplementedError

    def launch_cooperative_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream,
                                  params):
        """cuLaunchCooperativeKernel (every block resident at once; grid-wide barriers)."""
        raise NotImplementedError

    def occupancy_max_active_blocks(self, func, block_size, dynamic_shared_bytes):
        """Blocks of ``block_size`` threads (int) of ``func`` one multiprocessor holds at once
        (cuOccupancyMaxActiveBlocksPerMultiprocessor)."""
        raise NotImplementedError

    # -- the simulator backend's calls (driver/sim.py; simulator/ uses them) ---------------
    # A real GPU runs kernels and reads device memory itself; the real driver raises.
    def run_on_stream(self, stream, fn):
        """Run ``fn()`` as work on ``stream`` (a simulated kernel launch), in stream order."""
        raise NotImplementedError(f"{type(self).__name__}.run_on_stream: simulator only")

    def host_view(self, ptr, nbytes):
        """A writable uint8 ndarray over ``nbytes`` of device-accessible memory at ``ptr``."""
        raise NotImplementedError(f"{type(self).__name__}.host_view: simulator only")

    def pointer_kind(self, ptr):
        """'device', 'managed', 'host', 'mapped', 'registered' or None for ``ptr``."""
        raise NotImplementedError(f"{type(self).__name__}.pointer_kind: simulator only")

    # -- CUDA graphs (stream capture) -----------------------------------------------------
    def stream_begin_capture(self, stream):
        """Start capturing ``stream``'s work into a graph (cuStreamBeginCapture, relaxed mode,
        so allocations may run in the capturing thread)."""
        raise NotImplementedError

    def stream_end_capture(self, stream):
        """End the capture; return the captured graph's handle (cuStreamEndCapture)."""
        raise NotImplementedError

    def stream_is_capturing(self, stream):
        """True while ``stream`` is being captured (cuStreamIsCapturing)."""
        raise NotImplementedError

    def graph_instantiate(self, graph):
        """An executable graph from ``graph`` (cuGraphInstantiate); returns its handle."""
        raise NotImplementedError

    def graph_launch(self, graph_exec, stream):
        """Run an executable graph on ``stream`` (cuGraphLaunch)."""
        raise NotImplementedError

    def graph_destroy(self, graph):
        """cuGraphDestroy."""
        raise NotImplementedError

    def graph_exec_destroy(self, graph_exec):
        """cuGraphExecDestroy."""
        raise NotImplementedError

    def graph_node_count(self, graph):
        """Number of nodes in ``graph`` (cuGraphGetNodes)."""
        raise NotImplementedError

    # -- IPC -----------------------------------------------------------------------------
    def ipc_get_mem_handle(self, ptr):
        """64-byte IPC handle (bytes) of a device allocation (cuIpcGetMemHandle)."""
        raise NotImplementedError

    def ipc_open_mem_handle(self, handle):
        """Open an IPC handle (bytes) from another process, return the device pointer."""
        raise NotImplementedError

    def ipc_close_mem_handle(self, ptr):
        """cuIpcCloseMemHandle."""
        raise NotImplementedError
