"""Helpers for the simulator's kernel-runner tests: launch plain Python kernels through
``cujit.simulator.kernel.run_kernel`` (the dispatcher's entry point on the simulator)."""
import pytest


def _dim3(d):
    if isinstance(d, int):
        return (d, 1, 1)
    d = tuple(d)
    return d + (1,) * (3 - len(d))


@pytest.fixture
def launch():
    """``launch(fn, griddim, blockdim, *args, stream=0, shmem=0)`` runs ``fn`` as a kernel.
    Each function gets one SimKernel for the test, as a dispatcher keeps one for its kernel
    (typings and frozen constants per signature)."""
    from cujit.simulator.kernel import SimKernel, run_kernel
    owned = {}

    def _launch(fn, griddim, blockdim, *args, stream=0, shmem=0):
        handle = stream if isinstance(stream, int) else stream.handle
        if not isinstance(fn, SimKernel):
            fn = owned.get(fn) or owned.setdefault(fn, SimKernel(fn))
        return run_kernel(fn, _dim3(griddim), _dim3(blockdim), handle, shmem, args)
    return _launch


@pytest.fixture
def no_typecheck(monkeypatch):
    """Launch without the compiler front end's typecheck (a no-op stands in), to exercise the
    simulator's own run-time checks and Python behaviour the compiler rejects (``raise``)."""
    import sys
    import types
    fake = types.ModuleType("cujit.frontend.typecheck")
    fake.type_launch = lambda pyfunc, args, debug=False, source=None: None
    monkeypatch.setitem(sys.modules, "cujit.frontend.typecheck", fake)


@pytest.fixture(params=["front end", "run time"])
def either_check(request):
    """Parametrise a test over the error coming from the compiler front end's typecheck and
    from the simulator's own run-time check (typecheck replaced by a no-op)."""
    if request.param == "run time":
        request.getfixturevalue("no_typecheck")
    return request.param
