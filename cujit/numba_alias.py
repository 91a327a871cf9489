"""``numba.cuda`` resolved to cujit, for code that says ``from numba import cuda`` (docs/numba-alias.md).

A library, its test suite or a notebook written for numba.cuda runs on cujit unmodified when
this module's import hook is installed:

- ``python -m cujit run SCRIPT [ARGS]`` / ``python -m cujit run -m MODULE [ARGS]``
  (:mod:`cujit.run_cli`) installs it in a fresh interpreter and in every child process;
- ``python -m pytest -p cujit.numba_alias`` installs it for a pytest run (this module is also
  the pytest plugin);
- :func:`install` installs it in the running interpreter (before anything imports
  ``numba.cuda``).

The hook is a :data:`sys.meta_path` finder (:class:`NumbaCudaFinder`), first in the list.  It
answers only for ``numba.cuda`` and the submodules in :data:`SUBMODULES`, whose module objects
*are* cujit's (``sys.modules["numba.cuda"] is cujit``), so ``cuda.jit``, ``isinstance(a,
cuda.cudadrv.devicearray.DeviceNDArray)`` and ``except cuda.CudaSupportError`` are cujit's own
objects.  Everything else under ``numba`` is Numba's when Numba is installed (``numba.njit``,
``numba.types``, ``numba.core.errors``).  When Numba is not installed, ``numba`` itself is a
stand-in package (:class:`NumbaStandIn`) that provides only ``numba.cuda``; any other name
under it raises :class:`NumbaNotInstalledError` (an ``ImportError``) saying so.

Child processes inherit the hook through the environment (:func:`child_environment`):
``CUJIT_NUMBA_ALIAS=1`` (``cujit.config.NUMBA_ALIAS``) and cujit's own ``sitecustomize``
directory (:data:`SITE_DIR`) first on ``PYTHONPATH``; that ``sitecustomize`` installs the hook
when the setting is on and then runs the ``sitecustomize`` it shadows, if any.  An interpreter
started with ``-E``/``-I`` ignores the environment, and so the alias.  The simulator is chosen
as in numba: ``NUMBA_ENABLE_CUDASIM=1`` (or ``CUJIT_ENABLE_CUDASIM=1``); under the alias the
simulator answers ``is_bfloat16_supported()`` and ``is_fp8_supported()`` False, as numba's
simulator does (``cujit.config.NUMBA_COMPAT``, which :func:`install` turns on).
"""
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

from .config import config

__all__ = ["SUBMODULES", "SITE_DIR", "HAS_NUMBA", "numba_installed", "NumbaCudaFinder", "NumbaStandIn", "NumbaNotInstalledError",
           "install", "uninstall", "installed", "install_from_environment",
           "child_environment", "pytest_load_initial_conftests"]

# numba.cuda's user-facing modules and the cujit module each is.  A module's name under its
# parent must be the same on both sides: the import system sets ``parent.<name>`` to what it
# loads, so a mismatch would overwrite a cujit attribute (``cujit.config`` is the settings
# object, and ``numba.cuda.config`` stays an attribute, never a module mapped here).
SUBMODULES = {
    "numba.cuda": "cujit",
    "numba.cuda.cudadrv": "cujit.cudadrv",
    "numba.cuda.cudadrv.driver": "cujit.cudadrv.driver",
    "numba.cuda.cudadrv.devicearray": "cujit.cudadrv.devicearray",
    "numba.cuda.cudadrv.devices": "cujit.cudadrv.devices",
    "numba.cuda.cudadrv.error": "cujit.cudadrv.error",
    "numba.cuda.cudadrv.linkable_code": "cujit.cudadrv.linkable_code",
    "numba.cuda.cudadrv.runtime": "cujit.cudadrv.runtime",
    "numba.cuda.random": "cujit.random",
    "numba.cuda.libdevice": "cujit.libdevice",
    "numba.cuda.fp16": "cujit.fp16",
    "numba.cuda.bf16": "cujit.bf16",
    "numba.cuda.fp8": "cujit.fp8",
    "numba.cuda.types": "cujit.types",
    "numba.cuda.extending": "cujit.extending",
    "numba.cuda.vector_types": "cujit.vector_types",
    "numba.cuda.args": "cujit.args",
    "numba.cuda.api": "cujit.api",
    "numba.cuda.vectorizers": "cujit.vectorizers",
    "numba.cuda.kernels": "cujit.kernels",
    "numba.cuda.kernels.transpose": "cujit.kernels.transpose",
    "numba.cuda.kernels.reduction": "cujit.kernels.reduction",
}

# The directory holding cujit's own sitecustomize.py, put first on a child's PYTHONPATH.
SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alias_site")

_DOC = "docs/numba-alias.md"


def numba_installed():
    """True when Numba itself can be imported: a finder other than the alias's finds
    ``numba`` (the stand-in does not count)."""
    for finder in sys.meta_path:
        if isinstance(finder, NumbaCudaFinder):
            continue
        find = getattr(finder, "find_spec", None)
        if find is not None and find("numba", None) is not None:
            return True
    return False


class NumbaNotInstalledError(ModuleNotFoundError):
    """A name of ``numba`` other than ``numba.cuda`` was used while ``numba`` is cujit's
    stand-in (Numba is not installed).  A ``ModuleNotFoundError`` (so an ``ImportError``):
    ``try: from numba import njit except ImportError:`` fallbacks work."""


def _not_installed(what):
    return NumbaNotInstalledError(
        f"{what}: Numba is not installed.  Under cujit's numba alias the package 'numba' is "
        f"a stand-in that provides only 'numba.cuda' (which is cujit); install Numba "
        f"(pip install numba) for its CPU JIT (numba.njit, numba.types, ...).  See {_DOC}.",
        name=what)


class NumbaStandIn(types.ModuleType):
    """The module ``numba`` when Numba is not installed and the alias is on: a package whose
    only name is ``cuda`` (cujit).  Any other public attribute raises
    :class:`NumbaNotInstalledError`; underscore names raise ``AttributeError`` (so ``inspect``
    and ``pickle``, which probe every module, are unaffected)."""

    def __getattr__(self, name):
        if name == "cuda":
            return importlib.import_module("numba.cuda")
        if name.startswith("_"):
            raise AttributeError(f"module 'numba' (cujit's stand-in) has no attribute {name!r}")
        raise _not_installed(f"numba.{name}")

    def __dir__(self):
        return ["cuda"]


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias name as the cujit module ``target`` itself (not a copy)."""

    def __init__(self, target):
        self.target = target
        self._target_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._target_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamped the alias's spec on the module; it keeps its own, so that
        # ``cujit.__spec__.name`` is still 'cujit' (reload, pickling by reference, runpy).
        module.__spec__ = self._target_spec


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = NumbaStandIn("numba", "cujit's stand-in for Numba (Numba is not installed): "
                                       f"provides only numba.cuda, which is cujit; see {_DOC}.")
        module.__path__ = []
        module.__all__ = ["cuda"]
        return module

    def exec_module(self, module):
        pass


class NumbaCudaFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` finder of the alias (see the module docstring).

    ``find_spec`` returns a spec for ``numba.cuda`` and :data:`SUBMODULES`, for ``numba``
    itself only when no other finder has Numba, and None for everything else (Numba's own
    modules are found by the finders after it).  Raises ``ModuleNotFoundError`` for a
    ``numba.cuda`` submodule that cujit has no equivalent of, and
    :class:`NumbaNotInstalledError` for any other ``numba.*`` module under the stand-in.

    ``set_compat`` records whether :func:`install` turned ``cujit.config.NUMBA_COMPAT`` on
    with this finder, so that :func:`uninstall` turns it off again.
    """

    def __init__(self):
        self.set_compat = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "numba":
            if numba_installed():
                return None
            return importlib.util.spec_from_loader("numba", _StandInLoader(), is_package=True)
        if not fullname.startswith("numba."):
            return None
        alias = SUBMODULES.get(fullname)
        if alias is not None:
            return importlib.util.spec_from_loader(fullname, _AliasLoader(alias),
                                                   is_package=_is_package(alias))
        if fullname.startswith("numba.cuda."):
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: under cujit's numba alias numba.cuda is cujit, "
                f"which has no equivalent of it (the modules it maps: "
                f"{', '.join(sorted(SUBMODULES))}; see {_DOC})", name=fullname)
        if isinstance(sys.modules.get("numba"), NumbaStandIn):
            raise _not_installed(fullname)
        return None



#: numba.cuda's ``HAS_NUMBA``: whether Numba is installed (read once, at import).
HAS_NUMBA = numba_installed()


def _is_package(module_name):
    spec = importlib.util.find_spec(module_name)
    return spec is not None and spec.submodule_search_locations is not None


def installed():
    """True when a :class:`NumbaCudaFinder` is on ``sys.meta_path``."""
    return any(isinstance(f, NumbaCudaFinder) for f in sys.meta_path)


def install():
    """Put the alias finder first on ``sys.meta_path`` (a no-op when it is already there).

    Also turns ``cujit.config.NUMBA_COMPAT`` on (an override) unless ``CUJIT_NUMBA_COMPAT``
    is set: on the simulator ``is_bfloat16_supported()`` and ``is_fp8_supported()`` then
    answer False, as numba.cuda's simulator does.

    Raises RuntimeError when ``numba.cuda`` (or a submodule) was imported before and is not
    cujit: objects made by Numba's CUDA target would then meet cujit's in one program.
    """
    for name in SUBMODULES:
        mod = sys.modules.get(name)
        if mod is not None and mod is not sys.modules.get(SUBMODULES[name]):
            raise RuntimeError(
                f"{name} was imported (from {getattr(mod, '__file__', None)!r}) before cujit's "
                f"numba alias was installed; install it first (python -m cujit run, or "
                f"pytest -p cujit.numba_alias; see {_DOC})")
    if not installed():
        finder = NumbaCudaFinder()
        # numba.cuda's answers to its capability queries (config.NUMBA_COMPAT), unless the
        # environment chose (CUJIT_NUMBA_COMPAT=0 keeps cujit's answers under the alias)
        if config.source("NUMBA_COMPAT") == "default":
            config.NUMBA_COMPAT = True
            finder.set_compat = True
        sys.meta_path.insert(0, finder)


def uninstall():
    """Take the alias finder off ``sys.meta_path`` and forget the modules imported through it
    (``numba.cuda``…, and the stand-in ``numba``), so later imports find Numba's again.
    cujit's own modules stay imported; ``cujit.config.NUMBA_COMPAT`` is turned off again when
    :func:`install` turned it on."""
    finders = [f for f in sys.meta_path if isinstance(f, NumbaCudaFinder)]
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, NumbaCudaFinder)]
    if any(f.set_compat for f in finders):
        del config.NUMBA_COMPAT
    for name in list(SUBMODULES):
        if sys.modules.get(name) is not None and sys.modules.get(name) is \
                sys.modules.get(SUBMODULES[name]):
            del sys.modules[name]
    if isinstance(sys.modules.get("numba"), NumbaStandIn):
        del sys.modules["numba"]


def install_from_environment():
    """:func:`install` when ``cujit.config.NUMBA_ALIAS`` is on (``CUJIT_NUMBA_ALIAS=1``, set
    for child processes by :func:`child_environment`); returns whether it did."""
    if not config.NUMBA_ALIAS:
        return False
    install()
    return True


def child_environment(environ=None):
    """A copy of ``environ`` (default: this process's environment) under which a new Python process has the
    alias: ``CUJIT_NUMBA_ALIAS=1`` and :data:`SITE_DIR` first on ``PYTHONPATH`` (once)."""
    env = dict(config.environment() if environ is None else environ)
    env["CUJIT_NUMBA_ALIAS"] = "1"
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    parts = [SITE_DIR] + [p for p in parts if os.path.abspath(p) != SITE_DIR]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


# ---- the pytest plugin: ``python -m pytest -p cujit.numba_alias`` -------------------------

def pytest_load_initial_conftests(early_config, parser, args):
    """pytest hook, run before any conftest.py or test module is imported: install the alias
    here and, through the environment, in the processes the tests start (pytest-xdist
    workers, ``subprocess`` of ``sys.executable``, multiprocessing)."""
    install()
    config.update_environment(child_environment())
