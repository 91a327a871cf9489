"""Child-process runner for the bad-input table (tests/reliability/test_rel_badinput.py).

Started once per test module; imports NumPy and cujit but does not initialise CUDA, then
for each case read from stdin (one JSON line: ``{"code": ..., "timeout": ...}``) forks a
child that initialises CUDA, runs the code and reports what it raised.  A crash or a hang of
one case is reported for that case (``"crash"`` with the signal or exit status, or
``"hang"``), and the next case starts from a fresh child.  Replies are one JSON line each:
``{"outcome": "ok"|"raised"|"crash"|"hang", "type": ..., "mro": [...], "message": ...}``."""
import json
import os
import select
import signal
import sys
import time

import importlib
import pkgutil

import numpy as np      # noqa: F401 - imported once, before forking
import cujit            # noqa: F401

# cujit imports its layers lazily; import them all once here (importing initialises no
# driver), or every child pays ~0.5 s for it.
for _m in pkgutil.walk_packages(cujit.__path__, "cujit."):
    if not _m.name.startswith(("cujit.demo", "cujit.cli", "cujit.__main__")):
        try:
            importlib.import_module(_m.name)
        except ImportError:
            pass
from cujit import driver as _drv   # noqa: E402
assert _drv._driver is None, "importing cujit initialised a driver: children could not use it"


def _kernel(src, name="k"):
    """Compile-able ``@cuda.jit`` function ``name`` from source text (kernels need a file)."""
    import importlib.util
    import tempfile
    path = os.path.join(tempfile.mkdtemp(prefix="cujit_case_"), "case_kernel.py")
    with open(path, "w") as f:
        f.write("import cujit as cuda\n" + src)
    spec = importlib.util.spec_from_file_location("case_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _child(code, wfd):
    out = {"outcome": "ok"}
    try:
        ns = {"np": np, "cuda": cujit, "cujit": cujit, "kernel": _kernel}
        exec(compile(code, "<case>", "exec"), ns)
    except BaseException as exc:    # noqa: BLE001 - the case's outcome is what it raised
        out = {"outcome": "raised", "type": type(exc).__name__,
               "mro": [c.__name__ for c in type(exc).__mro__], "message": str(exc)[:500]}
    os.write(wfd, json.dumps(out).encode())
    os.close(wfd)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run(code, timeout):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(code, w)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            return {"outcome": "hang"}
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            data = os.read(r, 65536)
            if not data:
                break
            chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if chunks:
        return json.loads(b"".join(chunks))
    return {"outcome": "crash", "status": os.waitstatus_to_exitcode(status)}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        reply = _run(req["code"], req.get("timeout", 60))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
