"""The pytest plugin that runs numba-cuda's own test modules on cujit (docs/conformance.md).

``python -m pytest -p cujit.conformance_harness MODULE.py`` with ``CUJIT_CONFORMANCE_TESTS``
(``cujit.config.CONFORMANCE_TESTS``) naming numba-cuda's ``numba/cuda/tests`` directory, as
:mod:`cujit.conformance` starts it for each module.  The plugin installs the numba alias
(:mod:`cujit.numba_alias`: ``numba.cuda`` is cujit) and, first on ``sys.meta_path``, a
:class:`HarnessFinder` that resolves numba-cuda's test infrastructure to **the user's own
copy of numba-cuda**, never to files shipped by cujit:

- ``numba.cuda.testing`` is ``<tests>/../testing.py`` (``CUDATestCase``, ``skip_on_cudasim``,
  ``skip_unless_cc_60``...), ``numba.cuda.tests`` and everything under it are the files of
  ``<tests>`` (``numba.cuda.tests.support``, ``numba.cuda.tests.cudapy.cache_usecases``...).

Those two files, and user-facing test modules (``test_warp_ops.py``, ``test_flow_control.py``,
``extensions_usecases.py``...), import at module level a few modules of numba-cuda's
implementation.  The finder answers for exactly those (:data:`HARNESS_MODULES`) with small modules built here:
where the name is user-facing and cujit has it, the object is cujit's own
(``numba.cuda.core.errors.TypingError`` is ``cujit.TypingError``,
``numba.cuda.dispatcher.CUDADispatcher`` is cujit's dispatcher class,
``numba.cuda.core.config`` is ``cujit.config``, the NRT's ``rtsys`` is a
:class:`KernelHeapStats` whose counters stay zero: cujit's kernels allocate no device heap);
where it is a piece of numba's compiler (``numba.cuda.extending.register_model``,
``numba.cuda.datamodel.models.OpaqueModel``), it is an :class:`Internal` placeholder that raises ``NotImplementedError`` naming
it when used, so a test needing it fails rather than passes.  A test module importing any other
``numba.cuda.X`` gets the alias's ``ModuleNotFoundError`` and is counted as not collected.

The plugin also provides what numba-cuda's ``testing/conftest.py`` (not in its wheel) gives
``CUDATestCase``: the class fixture ``initialize_from_pytest_config`` and the option
``--dump-failed-filechecks``.
"""
import collections
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import types

import numpy as np
import pytest

import cujit
from . import bf16 as cujit_bf16
from . import extending as cujit_extending
from . import fp8 as cujit_fp8
from . import numba_alias
from .vector_types import vector_types as cujit_vector_types
from .frontend import libdevice_table
from .frontend.errors import RequireLiteralValue
from .dispatch.dispatcher import Dispatcher
from .config import config

__all__ = ["HARNESS_MODULES", "Internal", "Registration", "HarnessFinder", "tests_directory",
           "pytest_addoption", "pytest_load_initial_conftests", "pytest_collect_directory",
           "initialize_from_pytest_config"]


class KernelHeapStats:
    """numba-cuda's NRT runtime system (``rtsys``) as it is under cujit: cujit's kernels
    allocate no device-heap memory (arrays in kernels are shared, local or constant memory),
    so the allocation counters numba-cuda's leak checks read (``MemoryLeakMixin``) are all
    zero.  ``memsys_enable_stats()`` / ``memsys_disable_stats()`` switch the flag
    ``memsys_stats_enabled()`` reports; ``get_allocation_stats()`` gives
    ``(alloc, free, mi_alloc, mi_free)``, all 0."""

    _Stats = collections.namedtuple("_Stats", "alloc free mi_alloc mi_free")

    def __init__(self):
        self._enabled = False

    def memsys_enable_stats(self):
        self._enabled = True

    def memsys_disable_stats(self):
        self._enabled = False

    def memsys_stats_enabled(self):
        return self._enabled

    def get_allocation_stats(self):
        return self._Stats(0, 0, 0, 0)


class Internal:
    """A numba-cuda internal that cujit does not have, standing where numba-cuda's test
    infrastructure imports it.  Importing it works (so ``testing.py`` and ``support.py``
    load); calling it or reading an attribute raises ``NotImplementedError`` naming it."""

    def __init__(self, qualname):
        self._qualname = qualname

    def _missing(self):
        return NotImplementedError(
            f"{self._qualname} is a numba-cuda internal (its compiler, data model or runtime) "
            "that cujit does not have; a test that uses it is out of cujit's scope "
            "(docs/conformance.md)")

    def __call__(self, *args, **kwargs):
        raise self._missing()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._missing()

    def __repr__(self):
        return f"<numba-cuda internal {self._qualname} (not in cujit)>"


class Registration(Internal):
    """A numba-cuda registration decorator that cujit does not have (``typeof_impl``,
    ``register_model``, ``make_attribute_wrapper``, ``cudaimpl.lower``...), standing where a
    test module applies it at import.  ``reg(*keys)`` and ``reg.register(*keys)`` accept the
    registration and give back a decorator (:meth:`registered`) that puts an :class:`Internal`
    named after this registration in place of what it decorates.  Nothing reaches cujit's
    compiler, so a kernel using what was registered fails at cujit's typing, and a test using
    the decorated object fails on the placeholder (neither ever passes).  Reading any other
    attribute raises ``NotImplementedError`` naming it, as :class:`Internal` does."""

    def __call__(self, *keys, **kwargs):
        return self.registered

    def registered(self, obj):
        """The placeholder standing for ``obj`` once registered through this decorator."""
        return Internal(self._qualname)

    def __getattr__(self, name):
        if name == "register":
            return self.__call__
        return super().__getattr__(name)


def _internal_class(qualname, base=object):
    """A placeholder for a numba-cuda class that test modules subclass at import (numba's data
    models, typing templates) or name in ``except`` (``base``: an exception class): subclassing
    works; making an instance raises ``NotImplementedError`` naming it, so cujit never raises
    one and a test expecting it fails."""
    def __init__(self, *args, **kwargs):
        raise Internal(qualname)._missing()
    return type(qualname.rsplit(".", 1)[-1], (base,), {
        "__init__": __init__, "__module__": qualname.rsplit(".", 1)[0]})


class _Namespace(Internal):
    """A numba-cuda module reached as an attribute (``numba.cuda.extending.core_models``):
    the names in ``members`` are their placeholders; reading any other raises
    ``NotImplementedError`` naming it (``core_models.ArrayModel``)."""

    def __init__(self, qualname, members):
        super().__init__(qualname)
        self._members = members

    def __getattr__(self, name):
        if name in self.__dict__.get("_members", {}):
            return self._members[name]
        if name.startswith("__"):
            raise AttributeError(name)
        raise Internal(f"{self._qualname}.{name}")._missing()


def _cuda_core_ge_1_0():
    """numba-cuda's ``_compat.CUDA_CORE_GE_1_0``: whether the installed cuda-core is 1.0 or
    later (False when it is not installed)."""
    try:
        found = importlib.metadata.version("cuda-core")
    except importlib.metadata.PackageNotFoundError:
        return False
    major = found.split(".")[0]
    return major.isdigit() and int(major) >= 1


def _cffi_supported():
    return importlib.util.find_spec("cffi") is not None


def _no_toolkit_file(*args, **kwargs):
    raise FileNotFoundError("cujit's conformance harness: no CUDA toolkit headers or static "
                            "libraries are looked up (cujit does not compile CUDA C)")


def _as_dtype(typ):
    """numba's ``numpy_support.as_dtype``: the NumPy dtype of a scalar or record type (cujit's
    or Numba's), by :func:`cujit.types.as_dtype_type`; its TypeError for other types."""
    return cujit.types.as_dtype_type(typ).dtype


def _signature(return_type, *args):
    """numba's ``typing.signature(return_type, *args)``: cujit's
    :class:`cujit.types.Signature` of those types."""
    return cujit.types.Signature(return_type, args)


#: numba's warning categories that numba-cuda's tests import (to filter or expect them).
_NUMBA_WARNINGS = ("NumbaWarning", "NumbaPerformanceWarning", "NumbaDeprecationWarning",
                   "NumbaDebugInfoWarning", "NumbaInvalidConfigWarning")


def _numba_warning_classes():
    """Numba's own warning classes (``numba.core.errors``) when Numba is installed, else none:
    those cujit does not emit (``NumbaDeprecationWarning``, ``NumbaDebugInfoWarning``), so a
    test expecting one fails, and one that only filters them runs; the others are replaced
    by cujit's own classes of the same names."""
    if not numba_alias.HAS_NUMBA:
        return {}
    errors = importlib.import_module("numba.core.errors")
    return {n: getattr(errors, n) for n in _NUMBA_WARNINGS if hasattr(errors, n)}


#: ``arg`` of numba's libdevice declaration table: one parameter of a libdevice function
#: (``is_ptr``: an out-argument libdevice writes through).
_LibdeviceArg = collections.namedtuple("arg", ("name", "ty", "is_ptr"))


def _libdevice_functions():
    """numba's ``libdevicefuncs.functions`` from cujit's own libdevice table
    (:data:`cujit.frontend.libdevice_table.FUNCTIONS`): ``{'__nv_<name>': (return type,
    [arg(name, type, is_ptr), ...])}``, the out-arguments after the parameters."""
    out = {}
    for fn in libdevice_table.FUNCTIONS.values():
        params = [_LibdeviceArg(f"x{i}", t, False) for i, t in enumerate(fn.params)]
        outs = [_LibdeviceArg(f"out{i}", t, True) for i, t in enumerate(fn.outs)]
        out[fn.symbol] = (fn.ret, params + outs)
    return out


def _libdevice_signature(retty, args):
    """numba's ``libdevicefuncs.create_signature``: the signature a kernel's call of the
    libdevice function sees (the out-arguments become members of a returned tuple), by
    cujit's own rule (:class:`cujit.frontend.libdevice_table.LibdeviceFunction`)."""
    fn = libdevice_table.LibdeviceFunction(
        "", retty, tuple(a.ty for a in args if not a.is_ptr),
        tuple(a.ty for a in args if a.is_ptr))
    return cujit.types.Signature(fn.result, fn.params)


#: the names of numba-cuda's ``_internal.cuda_fp8`` that are cujit's (:mod:`cujit.fp8`).
_FP8_NAMES = ("fp8_e5m2", "fp8_e4m3", "fp8_e8m0", "saturation_t", "fp8_interpretation_t",
              "cvt_float_to_fp8", "cvt_double_to_fp8", "cvt_bfloat16raw_to_fp8",
              "cvt_float_to_e8m0", "cvt_double_to_e8m0", "cvt_bfloat16raw_to_e8m0",
              "cvt_e8m0_to_bf16raw")


def _module_contents():
    """``{module name: {attribute: value}}`` of :data:`HARNESS_MODULES` (built when a child
    process imports one, so cujit's compiler is loaded only there)."""
    internal = Internal
    errors = {"TypingError": cujit.TypingError, "CompileError": cujit.CompileError,
              "RequireLiteralValue": RequireLiteralValue,
              **_numba_warning_classes(),
              # the warnings cujit emits are its own classes, under numba's names
              "NumbaWarning": cujit.NumbaWarning,
              "NumbaPerformanceWarning": cujit.NumbaPerformanceWarning,
              "NumbaInvalidConfigWarning": cujit.NumbaInvalidConfigWarning}
    return {
        "numba.cuda.utils": {"PYVERSION": sys.version_info[:2]},
        "numba.cuda.cuda_paths": {"get_conda_ctk_libdir": lambda: None},
        "numba.cuda.cudadrv.libs": {"get_cuda_include_dir": _no_toolkit_file,
                                    "get_cudalib": _no_toolkit_file,
                                    "check_static_lib": _no_toolkit_file},
        "numba.cuda.dispatcher": {"CUDADispatcher": Dispatcher},
        "numba.cuda.core": {},
        "numba.cuda.core.errors": errors,
        "numba.cuda.core.config": {},            # replaced by cujit.config itself below
        "numba.cuda.core.pythonapi": {"unbox": internal("numba.cuda.core.pythonapi.unbox")},
        "numba.cuda.typing": {"signature": _signature},
        "numba.cuda.typing.typeof": {"typeof": cujit.types.typeof},
        "numba.cuda.typing.cffi_utils": {"SUPPORTED": _cffi_supported()},
        "numba.cuda.memory_management": {},
        "numba.cuda.memory_management.nrt": {"rtsys": KernelHeapStats()},
        # the alias maps numba.cuda.extending to cujit.extending; numba-cuda's support.py
        # also imports three pieces of numba's data-model API from it, which cujit lacks
        # (and extensions_usecases.py registers a struct type through the rest at import)
        "numba.cuda.extending": {
            **{n: getattr(cujit_extending, n) for n in cujit_extending.__all__},
            **{n: internal(f"numba.cuda.extending.{n}")
               for n in ("NativeValue", "overload_attribute", "overload_method",
                         "_Intrinsic")},
            **{n: Registration(f"numba.cuda.extending.{n}")
               for n in ("typeof_impl", "register_model", "make_attribute_wrapper",
                         "type_callable", "lower_builtin")},
            "core_models": _Namespace("numba.cuda.extending.core_models", {
                n: _internal_class(f"numba.cuda.extending.core_models.{n}")
                for n in ("StructModel", "OpaqueModel", "PrimitiveModel")})},
        # numba's typing templates and the CUDA target's registry of them (test_extending.py
        # declares an attribute through them at import)
        "numba.cuda.typing.templates": {
            n: _internal_class(f"numba.cuda.typing.templates.{n}")
            for n in ("AttributeTemplate", "AbstractTemplate", "ConcreteTemplate")},
        "numba.cuda.cudadecl": {"registry": _Namespace("numba.cuda.cudadecl.registry", {
            n: (Registration(f"numba.cuda.cudadecl.registry.{n}")
                if n == "register_global"
                else Registration(f"numba.cuda.cudadecl.registry.{n}").registered)
            for n in ("register", "register_attr", "register_global")})},
        "numba.cuda.errors": {"LoweringError": _internal_class("numba.cuda.errors.LoweringError",
                                                               Exception)},
        "numba.cuda.cudaimpl": {n: Registration(f"numba.cuda.cudaimpl.{n}")
                                for n in ("lower", "lower_attr", "lower_constant")},
        # numba's LLVM IR helpers (cujit builds its IR its own way)
        "numba.cuda.cgutils": {n: internal(f"numba.cuda.cgutils.{n}")
                               for n in ("create_struct_proxy", "get_or_insert_function",
                                         "pack_array", "unpack_tuple")},
        # numba's bytecode analysis (cujit compiles from the ast)
        "numba.cuda.core.controlflow": {
            n: internal(f"numba.cuda.core.controlflow.{n}")
            for n in ("CFGraph", "ControlFlowAnalysis")},
        "numba.cuda.core.bytecode": {
            n: internal(f"numba.cuda.core.bytecode.{n}")
            for n in ("FunctionIdentity", "ByteCode", "_fix_LOAD_GLOBAL_arg")},
        "numba.cuda.compiler": {n: getattr(cujit, n) for n in (
            "compile", "compile_ptx", "compile_for_current_device",
            "compile_ptx_for_current_device")},
        "numba.cuda._compat": {"CUDA_CORE_GE_1_0": _cuda_core_ge_1_0()},
        # numba's NVRTC wrapper (cujit compiles no CUDA C)
        "numba.cuda.cudadrv.nvrtc": {
            "get_arch_option": internal("numba.cuda.cudadrv.nvrtc.get_arch_option")},
        "numba.cuda._internal": {},
        # the bfloat16 and FP8 bindings numba-cuda's bf16.py and fp8.py re-export
        "numba.cuda._internal.cuda_bf16": {
            **{n: getattr(cujit_bf16, n) for n in cujit_bf16.__all__},
            "nv_bfloat16": cujit_bf16.bfloat16},
        "numba.cuda._internal.cuda_fp8": {n: getattr(cujit_fp8, n) for n in _FP8_NAMES},
        # numba-cuda's simulator has vector-type classes of its own, listed in this table
        # (test_vector_type.py reads it under the simulator); cujit's simulator runs the
        # same vector types as the GPU, so its table is numba.cuda.vector_types's
        "numba.cuda.simulator": {},
        "numba.cuda.simulator.vector_types": {"vector_types": cujit_vector_types},
        "numba.cuda.datamodel": {},
        "numba.cuda.datamodel.models": {
            "OpaqueModel": internal("numba.cuda.datamodel.models.OpaqueModel")},
        "numba.cuda.np": {},
        "numba.cuda.np.numpy_support": {
            "numpy_version": tuple(int(p) for p in np.__version__.split(".")[:2]),
            "from_dtype": cujit.types.from_dtype, "as_dtype": _as_dtype,
            # arrays over C pointers inside kernels
            "carray": cujit.carray, "farray": cujit.farray},
        # the launch configuration seen by numba's compilation pipeline (its dispatcher's
        # _compile_for_args and launch-config-sensitive lowering), which cujit does not have
        "numba.cuda.launchconfig": {
            n: internal(f"numba.cuda.launchconfig.{n}")
            for n in ("current_launch_config", "ensure_current_launch_config",
                      "capture_compile_config")},
        "numba.cuda.misc": {},
        "numba.cuda.misc.special": {"literal_unroll": cujit.literal_unroll},
        # numba's gufunc scheduler class (cujit's guvectorize schedules its own way)
        "numba.cuda.deviceufunc": {
            "GUFuncEngine": internal("numba.cuda.deviceufunc.GUFuncEngine")},
        "numba.cuda.libdevicefuncs": {"functions": _libdevice_functions(),
                                      "create_signature": _libdevice_signature,
                                      "arg": _LibdeviceArg},
    }


#: The numba-cuda modules that ``testing.py``, ``tests/support.py`` and user-facing test
#: modules import at module level and that the alias does not map; :class:`HarnessFinder`
#: answers for them.
HARNESS_MODULES = ("numba.cuda.utils", "numba.cuda.cuda_paths", "numba.cuda.cudadrv.libs",
                   "numba.cuda.dispatcher", "numba.cuda.core", "numba.cuda.core.errors",
                   "numba.cuda.core.config", "numba.cuda.core.pythonapi", "numba.cuda.typing",
                   "numba.cuda.typing.typeof", "numba.cuda.typing.cffi_utils", "numba.cuda.memory_management",
                   "numba.cuda.memory_management.nrt", "numba.cuda.extending",
                   "numba.cuda.datamodel", "numba.cuda.datamodel.models", "numba.cuda.np",
                   "numba.cuda.np.numpy_support", "numba.cuda.launchconfig", "numba.cuda.misc",
                   "numba.cuda.misc.special", "numba.cuda.deviceufunc",
                   "numba.cuda.libdevicefuncs", "numba.cuda.typing.templates",
                   "numba.cuda.cudadecl", "numba.cuda.errors", "numba.cuda.cudaimpl",
                   "numba.cuda.cgutils",
                   "numba.cuda.core.controlflow", "numba.cuda.core.bytecode",
                   "numba.cuda.compiler", "numba.cuda._compat", "numba.cuda.cudadrv.nvrtc",
                   "numba.cuda._internal",
                   "numba.cuda._internal.cuda_bf16", "numba.cuda._internal.cuda_fp8",
                   "numba.cuda.simulator", "numba.cuda.simulator.vector_types")

_PACKAGES = {"numba.cuda.core", "numba.cuda.typing", "numba.cuda.memory_management",
             "numba.cuda.datamodel", "numba.cuda.np", "numba.cuda.misc", "numba.cuda._internal",
             "numba.cuda.simulator"}


class _HarnessLoader(importlib.abc.Loader):
    def __init__(self, finder):
        self.finder = finder

    def create_module(self, spec):
        if spec.name == "numba.cuda.core.config":
            return config
        return None

    def exec_module(self, module):
        if module is config:
            return
        module.__dict__.update(self.finder.contents()[module.__spec__.name])
        module.__doc__ = ("cujit's conformance harness: the names numba-cuda's test "
                          "infrastructure imports from this numba-cuda module "
                          "(docs/conformance.md)")


class HarnessFinder(importlib.abc.MetaPathFinder):
    """Resolves ``numba.cuda.testing`` and ``numba.cuda.tests.*`` to the files of numba-cuda's
    test directory ``tests_dir`` (its ``numba/cuda/tests``), and :data:`HARNESS_MODULES` to the
    harness's modules (see the module docstring).  Returns None for every other name.

    Raises ValueError (at construction) when ``tests_dir`` is not a directory with an
    ``__init__.py`` and a ``../testing.py``.
    """

    def __init__(self, tests_dir):
        tests_dir = os.path.abspath(tests_dir)
        testing = os.path.join(os.path.dirname(tests_dir), "testing.py")
        if not os.path.isfile(os.path.join(tests_dir, "__init__.py")) or \
                not os.path.isfile(testing):
            raise ValueError(f"{tests_dir!r} is not numba-cuda's numba/cuda/tests directory "
                             "(expected an __init__.py in it and a testing.py beside it)")
        self.tests_dir = tests_dir
        self.testing_file = testing
        self._contents = None

    def contents(self):
        """:func:`_module_contents`, built once per finder (per child process)."""
        if self._contents is None:
            self._contents = _module_contents()
        return self._contents

    def _file_spec(self, fullname, path):
        if os.path.isdir(path):
            init = os.path.join(path, "__init__.py")
            if not os.path.isfile(init):
                return None
            return importlib.util.spec_from_file_location(
                fullname, init, submodule_search_locations=[path])
        if os.path.isfile(path + ".py"):
            return importlib.util.spec_from_file_location(fullname, path + ".py")
        return None

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "numba.cuda.testing":
            return importlib.util.spec_from_file_location(fullname, self.testing_file)
        if fullname == "numba.cuda.tests" or fullname.startswith("numba.cuda.tests."):
            rel = fullname.split(".")[3:]
            return self._file_spec(fullname, os.path.join(self.tests_dir, *rel))
        if fullname in HARNESS_MODULES:
            return importlib.util.spec_from_loader(fullname, _HarnessLoader(self),
                                                   is_package=fullname in _PACKAGES)
        return None


def tests_directory():
    """numba-cuda's test directory from ``cujit.config.CONFORMANCE_TESTS``; ValueError when
    the setting is empty."""
    tests_dir = config.CONFORMANCE_TESTS
    if not tests_dir:
        raise ValueError("CUJIT_CONFORMANCE_TESTS is not set: it names numba-cuda's "
                         "numba/cuda/tests directory (python -m cujit conformance sets it)")
    return tests_dir


def install(tests_dir):
    """The alias, then a :class:`HarnessFinder` for ``tests_dir`` first on
    ``sys.meta_path``; returns the finder (the one already there, when there is one)."""
    numba_alias.install()
    for f in sys.meta_path:
        if isinstance(f, HarnessFinder):
            return f
    finder = HarnessFinder(tests_dir)
    sys.meta_path.insert(0, finder)
    # ``from numba.cuda.cudadrv import libs`` looks the submodule up under the parent's own
    # name (``cujit.cudadrv.libs``), which no finder answers: importing each harness module
    # by its numba name first makes it an attribute of its parent, where that form finds it.
    # Importing one also sets it on its parent, and ``numba.cuda`` is cujit: where cujit has a
    # submodule of that name, cujit's own stays the attribute, which cujit's code reads.  It
    # is imported first when it was not yet (``cujit.simulator``, the backend, stands where
    # numba's ``numba.cuda.simulator`` is), so that ``from cujit import simulator`` later
    # never finds the harness's module in its place.
    for name in HARNESS_MODULES:
        parent_name, _, child = name.rpartition(".")
        parent = importlib.import_module(parent_name)
        own = parent.__dict__.get(child)
        own_name = f"{parent.__spec__.name}.{child}"
        if own is None and parent.__spec__.name != parent_name and \
                importlib.util.find_spec(own_name) is not None:
            own = importlib.import_module(own_name)
        importlib.import_module(name)
        if own is not None:
            setattr(parent, child, own)
    return finder


# ---- pytest hooks ----------------------------------------------------------------------

def pytest_addoption(parser):
    """numba-cuda's ``--dump-failed-filechecks`` (its testing/conftest.py), read by
    ``CUDATestCase.assertFileCheckMatches``."""
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="write reproducers of failed FileCheck tests (numba-cuda's option)")


def pytest_load_initial_conftests(early_config, parser, args):
    """Install the alias and the finder before any test module is imported; child processes
    the tests start inherit the alias (:func:`cujit.numba_alias.child_environment`)."""
    install(tests_directory())
    config.update_environment(numba_alias.child_environment())


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path, parent):
    """Directories above numba-cuda's test directory are plain directories, not packages:
    numba-cuda's own ``numba/cuda/__init__.py`` must never run (``numba.cuda`` is cujit)."""
    tests_dir = os.path.abspath(tests_directory())
    inside = os.path.commonpath([tests_dir, os.path.abspath(path)]) == tests_dir
    if not inside and os.path.isfile(os.path.join(path, "__init__.py")):
        return pytest.Dir.from_parent(parent, path=path)
    return None


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    """numba-cuda's class fixture for ``CUDATestCase``: the ``--dump-failed-filechecks``
    option on the test class."""
    request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")
