"""``python -m cujit access-report script.py [--grid-limit N] [--json PATH] [-- args...]``:
run a script's kernels on the simulator with the access recorder on and print the access
report (docs/access-report.md).

The simulator is forced (``CUJIT_ENABLE_CUDASIM=1``) even where a GPU exists, because only the
simulator sees every access.  The script runs as ``__main__`` with ``sys.argv`` set to the
script and its arguments, inside ``cujit.access_report(grid_limit=N)``: each launch runs only
its first N blocks (default 16; ``--grid-limit 0`` runs whole grids), which keeps GPU-sized
launches quick and gives the same per-request figures for grids whose blocks access memory
alike.  The kernels' results are then incomplete, so a script that checks its results may
raise: the report of the launches made so far is printed anyway and the exit status is 1.
A script written for numba.cuda runs unmodified: ``numba.cuda`` is cujit while it runs (the
numba alias, :mod:`cujit.numba_alias`, as under ``python -m cujit run``).
"""
import os
import runpy
import sys
import traceback

__all__ = ["DEFAULT_GRID_LIMIT", "cmd_access_report", "add_parser"]

DEFAULT_GRID_LIMIT = 16


def add_parser(sub):
    """The ``access-report`` subcommand on argparse subparsers ``sub``."""
    a = sub.add_parser("access-report",
                       help="run a script's kernels on the simulator and report global-memory "
                            "coalescing and shared-memory bank conflicts per source line")
    a.add_argument("script", help="the Python script to run")
    a.add_argument("script_args", nargs="*", metavar="ARG",
                   help="arguments for the script (put them after --)")
    a.add_argument("--grid-limit", type=int, default=DEFAULT_GRID_LIMIT, metavar="N",
                   help=f"run only the first N blocks of each launch (default "
                        f"{DEFAULT_GRID_LIMIT}; 0: whole grids)")
    a.add_argument("--json", metavar="PATH", help="also write the report's rows as JSON")
    return a


def cmd_access_report(args):
    """Run ``args.script`` with recording on; print the report.  Exit status: 0 when the
    script ran to the end, 1 when it raised (the report is printed anyway), 2 for a script
    path that is not a file, a negative ``--grid-limit`` or a ``--json`` path that cannot be
    written (checked before the script runs where it can be)."""
    path = args.script
    if not os.path.isfile(path):
        print(f"python -m cujit access-report: no such script: {path!r}", file=sys.stderr)
        return 2
    if args.grid_limit < 0:
        print(f"python -m cujit access-report: --grid-limit must be >= 0 (0: whole grids), "
              f"got {args.grid_limit}", file=sys.stderr)
        return 2
    if args.json:
        # checked before the script runs, which may take minutes
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json) or not os.path.isdir(folder):
            print(f"python -m cujit access-report: --json {args.json!r}: not a file path in "
                  "an existing folder", file=sys.stderr)
            return 2
    from .config import config
    config.export("ENABLE_CUDASIM", True)
    from .driver import get_driver
    if not get_driver().is_simulator:
        print("python -m cujit access-report: a GPU driver is already in use in this process; "
              "the access report needs the simulator", file=sys.stderr)
        return 2
    from .simulator.access import access_report
    from . import numba_alias
    # a script written for numba.cuda (``from numba import cuda``) reports too: numba.cuda
    # is cujit while it runs, as under ``python -m cujit run``
    alias_added = False
    if not numba_alias.installed():
        try:
            numba_alias.install()
            alias_added = True
        except RuntimeError:        # Numba's own numba.cuda is imported in this process
            pass
    limit = args.grid_limit or None
    print(f"cujit access-report: running {path} on the simulator"
          + (f", first {limit} blocks of each launch" if limit else ", whole grids"),
          file=sys.stderr, flush=True)
    status = 0
    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [path] + list(args.script_args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with access_report(grid_limit=limit) as rep:
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    status = 1
                    print(f"cujit access-report: the script exited with status {exc.code}",
                          file=sys.stderr)
            except Exception as exc:        # the report of what ran is still worth printing
                status = 1
                tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
                print("".join(tb[-3:]).rstrip(), file=sys.stderr)
                note = f" (each launch ran only its first {limit} blocks: --grid-limit 0 " \
                       f"runs whole grids)" if limit else ""
                print(f"cujit access-report: the script raised {type(exc).__name__}{note}; "
                      f"the report covers the launches made before", file=sys.stderr)
    finally:
        sys.argv = old_argv
        if sys.path and sys.path[0] != old_path0:
            del sys.path[0]
        if alias_added:
            numba_alias.uninstall()
    print(rep, flush=True)
    if args.json:
        import json
        try:
            with open(args.json, "w") as f:
                json.dump(rep.as_dicts(), f, indent=2)
                f.write("\n")
        except OSError as exc:
            print(f"python -m cujit access-report: cannot write --json {args.json!r}: {exc}",
                  file=sys.stderr)
            return 2
    return status
