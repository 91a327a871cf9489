"""numba's warnings: ``NumbaInvalidConfigWarning`` for ``jit(debug=True)`` with optimisation
on, and ``NumbaPerformanceWarning`` (on a GPU) for a grid of fewer than 128 blocks and for a
host array a launch copies; the settings that switch them off."""
import warnings

import numpy as np
import pytest

import cujit
from cujit import config


def _kernel():
    @cujit.jit
    def k(r, x):
        r[0] = x + 1
    return k


@pytest.fixture
def settings():
    """Set ``cujit.config`` overrides for one test; they are removed after it."""
    names = []

    def set_(**kw):
        for k, v in kw.items():
            setattr(config, k, v)
            names.append(k)
    yield set_
    for k in names:
        delattr(config, k)


def _recorded(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [x for x in w if issubclass(x.category, cujit.NumbaWarning)]


def test_debug_with_opt_warns_invalid_config():
    for call in (lambda: cujit.jit(debug=True), lambda: cujit.jit(debug=True, opt=True),
                 lambda: cujit.jit(debug=True, opt=2)):
        with pytest.warns(cujit.NumbaInvalidConfigWarning, match="not supported by CUDA"):
            call()


def test_debug_without_opt_and_opt_without_debug_do_not_warn():
    assert _recorded(lambda: cujit.jit(debug=True, opt=False)) == []
    assert _recorded(lambda: cujit.jit(debug=True, opt=0)) == []
    assert _recorded(lambda: cujit.jit()) == []
    assert _recorded(lambda: cujit.jit(opt=True)) == []


def test_debug_by_default_setting_warns_with_opt(settings):
    settings(CUDA_DEBUGINFO_DEFAULT=True)
    with pytest.warns(cujit.NumbaInvalidConfigWarning):
        cujit.jit()
    assert _recorded(lambda: cujit.jit(opt=False)) == []


def test_warning_classes_are_numbas_hierarchy():
    assert issubclass(cujit.NumbaPerformanceWarning, cujit.NumbaWarning)
    assert issubclass(cujit.NumbaInvalidConfigWarning, cujit.NumbaWarning)
    assert issubclass(cujit.NumbaWarning, Warning)


@pytest.mark.sim
def test_the_simulator_emits_no_performance_warnings(settings):
    settings(CUDA_LOW_OCCUPANCY_WARNINGS=True, CUDA_WARN_ON_IMPLICIT_COPY=True)
    k = _kernel()
    r = np.zeros(1)
    assert _recorded(lambda: k[1, 1](r, 1.0)) == []
    assert r[0] == 2.0


@pytest.mark.gpu
def test_a_small_grid_warns_low_occupancy_once_per_configuration(settings):
    settings(CUDA_LOW_OCCUPANCY_WARNINGS=True, CUDA_WARN_ON_IMPLICIT_COPY=False)
    k = _kernel()
    with pytest.warns(cujit.NumbaPerformanceWarning, match=r"Grid size 6 .+ low occupancy"):
        k[(2, 3), 32]
    assert _recorded(lambda: k[256, 32]) == []
    assert _recorded(lambda: k[(16, 8), 32]) == []       # 128 blocks: enough


@pytest.mark.gpu
@pytest.mark.parametrize("off", [dict(CUDA_LOW_OCCUPANCY_WARNINGS=False),
                                 dict(DISABLE_PERFORMANCE_WARNINGS=True)])
def test_low_occupancy_warning_switched_off(settings, off):
    settings(**{"CUDA_LOW_OCCUPANCY_WARNINGS": True, **off})
    assert _recorded(lambda: _kernel()[1, 1]) == []


@pytest.mark.gpu
def test_a_host_array_argument_warns_copy_overhead(settings):
    settings(CUDA_LOW_OCCUPANCY_WARNINGS=False, CUDA_WARN_ON_IMPLICIT_COPY=True)
    k = _kernel()
    cfg = k[1, 1]
    for host in (np.zeros(1), cujit.pinned_array(1)):
        with pytest.warns(cujit.NumbaPerformanceWarning,
                          match="Host array used in CUDA kernel will incur.+copy overhead"):
            cfg(host, 1.0)
        assert host[0] == 2.0


@pytest.mark.gpu
def test_device_mapped_managed_and_hinted_arrays_do_not_warn(settings):
    settings(CUDA_LOW_OCCUPANCY_WARNINGS=False, CUDA_WARN_ON_IMPLICIT_COPY=True)
    cfg = _kernel()[1, 1]
    for arr in (cujit.device_array(1), cujit.mapped_array(1), cujit.managed_array(1)):
        assert _recorded(lambda: cfg(arr, 1.0)) == []
    host = np.zeros(1)
    assert _recorded(lambda: cfg(cujit.InOut(host), 1.0)) == []
    assert host[0] == 2.0
    settings(DISABLE_PERFORMANCE_WARNINGS=True)
    assert _recorded(lambda: cfg(np.zeros(1), 1.0)) == []
