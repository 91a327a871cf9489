"""cujit's ``sitecustomize``: run by ``site`` at the start of every Python process whose
``PYTHONPATH`` starts with this folder (``python -m cujit run`` and ``pytest -p
cujit.numba_alias`` set that up, docs/numba-alias.md).

It installs the numba alias when ``CUJIT_NUMBA_ALIAS`` is on, then runs the ``sitecustomize``
this one shadows (the next one on ``sys.path``), if there is one, so an environment's own
start-up code still runs.  A failure is reported on stderr and never stops the interpreter
from starting: a process that cannot import cujit runs with Numba's own ``numba.cuda``, and
says so.
"""
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _install_alias():
    if importlib.util.find_spec("cujit") is None:
        # the cujit this file belongs to, when the child's path has no other
        sys.path.append(os.path.dirname(os.path.dirname(_HERE)))
    from cujit.numba_alias import install_from_environment
    if install_from_environment():
        from cujit.config import config
        if config.CONFORMANCE_TESTS:
            # a process started by a conformance run's test (multiprocessing's spawn):
            # numba.cuda.tests.* and numba.cuda.testing resolve as in its parent, so the
            # test functions it was sent unpickle
            from cujit.conformance_harness import install
            install(config.CONFORMANCE_TESTS)


def _run_shadowed_sitecustomize():
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _install_alias()
except Exception as exc:        # the interpreter must start anyway
    print(f"cujit: the numba alias was not installed in this process "
          f"({type(exc).__name__}: {exc})", file=sys.stderr)
_run_shadowed_sitecustomize()
