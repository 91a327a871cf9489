"""Runs the demo tasks in order, prints one row per task, then the memory report.

A task that raises is reported as FAIL with the exception (the other tasks still run), so
one broken piece never hides the rest.
"""
import importlib
import sys
import traceback
import warnings

from . import TASKS
from ._common import Result, Timer
from .report import memory_report, format_report

__all__ = ["run_demo", "format_row"]


def _fmt_time(s):
    if s >= 1:
        return f"{s:8.3f} s "
    if s >= 1e-3:
        return f"{s * 1e3:8.3f} ms"
    return f"{s * 1e6:8.1f} us"


def _fmt_rate(res):
    if res.rate is None:
        return " " * 16
    value, unit = res.rate, res.rate_unit
    if unit.startswith("G"):
        # The simulator's rates are tiny: step G -> M -> k so the figure stays readable.
        for prefix, factor in (("G", 1), ("M", 1e3), ("k", 1e6)):
            if value * factor >= 1 or prefix == "k":
                value, unit = value * factor, prefix + unit[1:]
                break
    return f"{value:10.1f} {unit:<7}"


def format_row(index, res):
    """``' 2  name  size  time  rate  PASS|FAIL'`` for :class:`Result` ``res``."""
    return (f"{index:2d}  {res.name:<38.38} {res.size:<24.24} {_fmt_time(res.seconds)} "
            f"{_fmt_rate(res)} {'PASS' if res.passed else 'FAIL'}")


def run_demo(cuda, sizes, tasks=TASKS, out=None):
    """Run ``tasks`` (module names from :data:`cujit.demo.TASKS`) with module ``cuda`` at
    ``sizes`` (a :class:`~cujit.demo._common.Sizes`), printing to ``out`` (a callable taking
    one line; None: silent).  Returns ``{'sizes': label, 'tasks': [Result dicts], 'memory':
    report dict or None, 'passed': bool, 'seconds': total wall time}``."""
    emit = out or (lambda line: None)
    results = []
    with Timer() as total, warnings.catch_warnings():
        # some tasks launch one block on purpose (shared-memory aliasing); numba's (and
        # cujit's) low-occupancy warning would only be noise in the report
        warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU "
                                r"under-utilization")
        for i, name in enumerate(tasks, 1):
            mod = importlib.import_module(f"{__package__}.{name}")
            try:
                res = mod.run(cuda, sizes)
            except Exception as exc:       # report it and go on with the other tasks
                res = Result(name, "-", passed=False,
                             detail=f"{type(exc).__name__}: {exc}")
                res.lines.extend(traceback.format_exception_only(type(exc), exc)[-1:])
                res.extra["traceback"] = traceback.format_exc()
            results.append(res)
            emit(format_row(i, res))
            for line in res.lines:
                emit(f"      {line.rstrip()}")
        try:
            mem = memory_report(cuda)
            emit(format_report(mem))
        except Exception as exc:
            mem = None
            emit(f"memory report unavailable: {type(exc).__name__}: {exc}")
    passed = all(r.passed for r in results)
    failed = [r.name for r in results if not r.passed]
    emit(f"{len(results) - len(failed)}/{len(results)} checks passed in {total.seconds:.1f} s"
         + ("" if passed else f"; FAILED: {', '.join(failed)}"))
    return {"sizes": sizes.label, "tasks": [r.as_dict() for r in results], "memory": mem,
            "passed": passed, "seconds": total.seconds}


def _main():
    # Developer hook: run the demo under another CUDA module (``python -m cujit.demo.runner
    # numba``), e.g. numba-cuda's simulator, to compare.  Never imported by cujit itself.
    which = sys.argv[1] if len(sys.argv) > 1 else "cujit"
    cuda = importlib.import_module("numba.cuda" if which == "numba" else "cujit")
    from ._common import sizes_for
    r = run_demo(cuda, sizes_for(True, "--quick" in sys.argv), out=print)
    sys.exit(0 if r["passed"] else 1)


if __name__ == "__main__":
    _main()
