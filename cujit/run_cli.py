"""``python -m cujit run [--sim] SCRIPT [ARGS...]``, ``python -m cujit run [--sim] -m MODULE
[ARGS...]`` and ``python -m cujit run [--sim] -c CODE [ARGS...]`` (``-`` as SCRIPT: the
program on stdin): run unmodified code that says ``from numba import cuda`` on cujit
(docs/numba-alias.md), as ``python`` runs those.

The command starts a fresh interpreter (``sys.executable``, replacing this process where the
OS allows, so signals, the exit status and ``sys.argv`` are the program's own) under
:func:`cujit.numba_alias.child_environment`: ``numba.cuda`` is cujit there and in every Python
process it starts.  ``--sim`` sets ``CUJIT_ENABLE_CUDASIM=1``; ``NUMBA_ENABLE_CUDASIM=1``
selects the simulator too, as in numba.
"""
import os
import subprocess
import sys

from .numba_alias import child_environment

__all__ = ["USAGE", "parse_run_args", "cmd_run", "add_parser"]

USAGE = ("usage: python -m cujit run [--sim] SCRIPT [ARGS...]\n"
         "       python -m cujit run [--sim] -m MODULE [ARGS...]\n"
         "       python -m cujit run [--sim] -c CODE [ARGS...]\n"
         "       python -m cujit run [--sim] - [ARGS...]   (the program on stdin)")


def add_parser(sub):
    """The ``run`` subcommand on argparse subparsers ``sub``, for ``--help``; its arguments
    are parsed by :func:`parse_run_args` (argparse would take the program's own options)."""
    import argparse
    r = sub.add_parser("run", help="run a script, module (-m) or code (-c) with numba.cuda "
                                   "resolved to cujit, in it and in its child processes",
                       usage=USAGE[len("usage: "):])
    r.add_argument("program", nargs=argparse.REMAINDER,
                   help="[--sim] SCRIPT [ARGS...], [--sim] -m MODULE [ARGS...] or [--sim] "
                        "-c CODE [ARGS...]")
    return r


def parse_run_args(argv):
    """``(sim, command)`` from the words after ``run``: ``command`` is the interpreter's
    argument list (``[script, *args]``, ``["-m", module, *args]``, ``["-c", code, *args]``
    or ``["-", *args]``).

    Raises ValueError naming what is missing: no program, ``-m`` without a module name,
    ``-c`` without code, an option other than ``--sim`` before the program, or a script that
    is not a file.
    """
    argv = list(argv)
    sim = False
    while argv and argv[0] == "--sim":
        sim = True
        argv.pop(0)
    if not argv:
        raise ValueError("no program given")
    if argv[0] == "-m":
        if len(argv) < 2 or not argv[1] or argv[1].startswith("-"):
            raise ValueError(f"-m needs a module name, got {argv[1:2] or 'nothing'}")
        return sim, argv
    if argv[0] == "-c":
        if len(argv) < 2:
            raise ValueError("-c needs the program's code, got nothing")
        return sim, argv
    if argv[0] == "-":
        return sim, argv
    if argv[0].startswith("-"):
        raise ValueError(f"unknown option {argv[0]!r} (options: --sim; then SCRIPT, -m "
                         "MODULE, -c CODE or - for stdin)")
    if not os.path.isfile(argv[0]):
        raise ValueError(f"no such script: {argv[0]!r}")
    return sim, argv


def cmd_run(argv):
    """Run the program named by ``argv`` (the words after ``run``) under the numba alias.
    Returns 2 (after a message on stderr) for bad arguments; otherwise does not return on
    POSIX (the process becomes the program) and returns the program's exit status elsewhere.
    """
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        print(__doc__.split("\n\n", 1)[1].strip())
        return 0
    try:
        sim, command = parse_run_args(argv)
    except ValueError as exc:
        print(f"python -m cujit run: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    env = child_environment()
    if sim:
        env["CUJIT_ENABLE_CUDASIM"] = "1"
    args = [sys.executable] + command
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(sys.executable, args, env)
    return subprocess.call(args, env=env)
