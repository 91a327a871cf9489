"""The simulator: a fake CUDA driver over host memory (:mod:`.driver`) and a kernel runner that
executes Python kernels on simulated threads.  Selected by ``CUJIT_ENABLE_CUDASIM=1`` or
``NUMBA_ENABLE_CUDASIM=1``.  Nothing here is imported unless the simulator is in use."""
