"""The command line: ``python -m cujit demo | info | bench | access-report`` (also the ``cujit``
script).

- ``demo [--quick] [--sim] [--json [PATH]] [--trace PATH]``: the five demo tasks of :mod:`cujit.demo`, each
  verified against NumPy, then the memory report.  On the GPU when one works, otherwise on the
  simulator (with a one-line banner) at sizes scaled down to finish in well under a minute.
  Exit status 1 when any check fails.
- ``info [--json [PATH]]``: versions, driver and its PTX ISA, compiler toolchain, devices,
  memory manager, simulator state and the effective configuration.  Never fails for lack of a
  GPU or driver: it says what is missing.
- ``bench [--quick] [--json PATH] [--plot PNG] [--sides ...] [--peers-python PYTHON]``: the
  side-by-side benchmarks in ``benchmarks/`` (cujit, bare cuda-bindings floors, numba-cuda and
  CuPy when importable; the peers under ``--peers-python`` or ``$CUJIT_BENCH_PEERS_PYTHON``).
- ``access-report script.py [--grid-limit N] [--json PATH] [-- ARGS]``: the script's kernels on
  the simulator with the access recorder on, then the report (:mod:`cujit.access_cli`).
- ``run [--sim] SCRIPT [ARGS]`` / ``run [--sim] -m MODULE [ARGS]``: unmodified code that says
  ``from numba import cuda`` runs on cujit, child processes included (:mod:`cujit.run_cli`).
- ``conformance [--sim] [--tests DIR] [--subset fast|all] [--json OUT] [--markdown OUT]``:
  numba-cuda's own test modules on cujit, per-module counts (:mod:`cujit.conformance`).

Backend choice happens here, before anything touches a driver: ``--sim`` (or
``CUJIT_ENABLE_CUDASIM=1`` / ``NUMBA_ENABLE_CUDASIM=1``) selects the simulator; otherwise a GPU
is probed with ``cuInit`` + ``cuDeviceGetCount`` and the simulator is used when that fails.
"""
import argparse
import importlib
import json
import os
import platform
import sys

__all__ = ["main", "probe_gpu", "gather_info", "format_info", "load_bench_runner"]


# probe_gpu calls cuInit itself: it lives in driver/ (the only code that calls CUDA).
from .driver.probe import probe_gpu  # noqa: E402,F401


def _use_simulator():
    from .config import config
    config.export("ENABLE_CUDASIM", True)


def _select_backend(force_sim):
    """Decide GPU or simulator; returns ``(simulator: bool, banner: str or '')``."""
    from .config import config
    if force_sim:
        _use_simulator()
        return True, "cujit: running on the simulator (--sim): sizes scaled down"
    if config.ENABLE_CUDASIM:
        return True, (f"cujit: running on the simulator ({config.source('ENABLE_CUDASIM')}=1): "
                      "sizes scaled down")
    ok, why = probe_gpu()
    if ok:
        return False, ""
    _use_simulator()
    return True, f"cujit: no GPU here ({why}): running on the simulator, sizes scaled down"


class _Output:
    """Human lines go to stdout, or to stderr when the JSON document owns stdout."""

    def __init__(self, json_target):
        self.json_target = json_target
        self.stream = sys.stderr if json_target == "-" else sys.stdout

    def line(self, text):
        print(text, file=self.stream, flush=True)

    def write_json(self, doc):
        if self.json_target is None:
            return
        text = json.dumps(doc, indent=2, default=_json_default)
        if self.json_target == "-":
            print(text, flush=True)
        else:
            with open(self.json_target, "w") as f:
                f.write(text + "\n")


def _json_default(obj):
    if hasattr(obj, "item"):            # NumPy scalars
        return obj.item()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


# -- demo -----------------------------------------------------------------------------------
def cmd_demo(args):
    """``python -m cujit demo``: returns the exit status (0 when every check passed)."""
    out = _Output(args.json)
    sim, banner = _select_backend(args.sim)
    if banner:
        out.line(banner)
    import cujit as cuda
    from .demo import TASKS
    from .demo._common import sizes_for
    from .demo.runner import run_demo
    sizes = sizes_for(sim, args.quick)
    out.line(f"cujit {cuda.__version__} demo on {'the simulator' if sim else _gpu_name()}"
             f" (sizes: {sizes.label})")
    tasks = tuple(args.only or TASKS)
    if args.trace:
        with cuda.trace(args.trace):
            result = run_demo(cuda, sizes, tasks=tasks, out=out.line)
        out.line(f"trace written to {args.trace} (open it in ui.perfetto.dev or chrome://tracing)")
    else:
        result = run_demo(cuda, sizes, tasks=tasks, out=out.line)
    result["backend"] = "simulator" if sim else "gpu"
    out.write_json(result)
    return 0 if result["passed"] else 1


def _gpu_name():
    try:
        from .driver import get_driver
        return get_driver().device_name(0)
    except Exception:
        return "the GPU"


# -- info -----------------------------------------------------------------------------------
def _version(dist, module=None):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        pass
    try:
        return getattr(importlib.import_module(module or dist), "__version__", "installed")
    except Exception:
        return None


def _toolchain():
    """What turns kernels into PTX and cubin here (libNVVM, libdevice, nvJitLink, llvmlite)."""
    from .driver.errors import GPU_EXTRA_HINT
    tc = {}
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
    except Exception as exc:
        load_nvidia_dynamic_lib = None
        tc["pathfinder"] = f"cuda-pathfinder unavailable: {exc}"
    for key, lib, mod in (("libnvvm", "nvvm", "nvvm"), ("nvjitlink", "nvJitLink", "nvjitlink")):
        entry = {"found": False}
        if load_nvidia_dynamic_lib is None:     # the lean install
            entry["why_not"] = "cuda-pathfinder is not installed"
            tc[key] = entry
            continue
        try:
            loaded = load_nvidia_dynamic_lib(lib)
            entry.update(found=True, path=loaded.abs_path, found_via=loaded.found_via)
            binding = importlib.import_module(f"cuda.bindings.{mod}")
            entry["version"] = ".".join(map(str, tuple(binding.version())[:2]))
        except Exception as exc:
            entry["why_not"] = f"{type(exc).__name__}: {exc}"
        tc[key] = entry
    try:
        from cuda.pathfinder import find_bitcode_lib
        tc["libdevice"] = find_bitcode_lib("device")
    except Exception as exc:
        tc["libdevice"] = f"not found ({type(exc).__name__})"
    try:
        import llvmlite  # noqa: F401  (the package only: binding and ir stay unloaded)
    except ImportError:
        tc["ptx_backend"] = "nothing (llvmlite, which builds the NVVM IR, is not installed)"
        return {**tc, "cubin": "nothing", "hint": GPU_EXTRA_HINT}
    try:
        from .nvvm import libnvvm as _nvvm
        tc["ptx_backend"] = _nvvm.backend_name()
    except Exception:
        tc["ptx_backend"] = "nvvm" if tc["libnvvm"]["found"] else "llvmlite"
    tc["cubin"] = "nvJitLink" if tc["nvjitlink"]["found"] else "driver JIT of PTX"
    return tc


def _ptx_isa(driver_version):
    try:
        from .nvvm.linker import driver_ptx_isa
        return "%d.%d" % driver_ptx_isa(driver_version)
    except Exception:
        return None


def _driver_info(info):
    from .driver import get_driver
    try:
        drv = get_driver()
    except Exception as exc:
        info["driver"] = {"available": False, "why_not": f"{type(exc).__name__}: {exc}",
                          "hint": "no usable CUDA driver: install the NVIDIA driver, or run on "
                                  "the simulator with CUJIT_ENABLE_CUDASIM=1"}
        info["devices"] = []
        return None
    v = drv.driver_version()
    info["driver"] = {"available": True, "backend": drv.name,
                      "simulator": bool(drv.is_simulator), "version": v,
                      "version_text": f"{v // 1000}.{(v % 1000) // 10}",
                      "max_ptx_isa": _ptx_isa(v)}
    devices = []
    for i in range(drv.get_device_count()):
        cc = (drv.device_attribute(i, "COMPUTE_CAPABILITY_MAJOR"),
              drv.device_attribute(i, "COMPUTE_CAPABILITY_MINOR"))
        devices.append({"id": i, "name": drv.device_name(i),
                        "compute_capability": f"{cc[0]}.{cc[1]}",
                        "total_memory": drv.device_total_memory(i),
                        "multiprocessors": drv.device_attribute(i, "MULTIPROCESSOR_COUNT")})
    info["devices"] = devices
    return drv


def _manager_info(info, with_context):
    from .config import config
    mm = {"setting": config.CUDA_MEMORY_MANAGER, "source": config.source("CUDA_MEMORY_MANAGER")}
    if with_context:
        try:
            from .runtime.devices import current_context
            ctx = current_context()
            m = ctx.memory_manager
            mm["class"] = f"{type(m).__module__}.{type(m).__qualname__}"
            free, total = ctx.get_memory_info()[:2]
            mm["device_free"], mm["device_total"] = int(free), int(total)
        except Exception as exc:
            mm["class"] = f"unavailable ({type(exc).__name__}: {exc})"
    info["memory_manager"] = mm


def gather_info():
    """Everything ``info`` prints, as a JSON-ready dict (keys: versions, driver, devices,
    toolchain, memory_manager, simulator, config).  Never raises for a missing GPU/driver."""
    import cujit
    from .config import config
    info = {"versions": {
        "cujit": cujit.__version__, "python": platform.python_version(),
        "numpy": _version("numpy"), "cuda-bindings": _version("cuda-bindings", "cuda.bindings"),
        "cuda-pathfinder": _version("cuda-pathfinder", "cuda.pathfinder"),
        "llvmlite": _version("llvmlite"), "greenlet": _version("greenlet")}}
    drv = _driver_info(info)
    info["toolchain"] = _toolchain()
    _manager_info(info, with_context=drv is not None and len(info["devices"]) > 0)
    info["simulator"] = {"enabled": bool(config.ENABLE_CUDASIM),
                         "source": config.source("ENABLE_CUDASIM"),
                         "device_memory": config.SIM_DEVICE_MEMORY,
                         "checks": bool(config.SIM_CHECKS)}
    info["backend"] = _backend_info(info, config)
    info["config"] = {attr: {"value": val, "source": src, "env": config.env_names(attr)}
                      for attr, (val, src) in config.as_dict().items()}
    return info


def _backend_info(info, config):
    """What a user's program and ``python -m cujit demo`` would run on now, and why (the
    simulator setting alone does not say it: demo falls back to the simulator by itself)."""
    if config.ENABLE_CUDASIM:
        why = f"{config.source('ENABLE_CUDASIM')}=1"
        return {"programs": "simulator", "demo": "simulator", "why": why}
    if info["driver"]["available"] and info["devices"]:
        return {"programs": "gpu", "demo": "gpu",
                "why": f"{len(info['devices'])} CUDA device(s) found"}
    return {"programs": "none", "demo": "simulator",
            "why": "no usable CUDA GPU; programs raise CudaSupportError unless "
                   "CUJIT_ENABLE_CUDASIM=1, demo switches to the simulator by itself"}


def _gib(n):
    return f"{n / 2**30:.1f} GiB"


def format_info(info):
    """The human-readable lines of :func:`gather_info`'s dict."""
    L = ["versions:"]
    L += [f"  {k:<16} {v if v else 'not installed'}" for k, v in info["versions"].items()]
    d = info["driver"]
    if d["available"]:
        kind = " (the simulator's fake driver)" if d["simulator"] else ""
        L.append(f"driver: CUDA {d['version_text']} ({d['version']}){kind}; "
                 f"max PTX ISA {d['max_ptx_isa'] or 'unknown'}")
    else:
        L.append(f"driver: none - {d['why_not']}")
        L.append(f"  {d['hint']}")
    tc = info["toolchain"]
    L.append("toolchain:")
    for key, label in (("libnvvm", "libNVVM"), ("nvjitlink", "nvJitLink")):
        e = tc[key]
        L.append(f"  {label:<16} " + (f"{e.get('version', '?')} at {e['path']} ({e['found_via']})"
                                      if e["found"] else f"not found - {e['why_not']}"))
    L.append(f"  {'libdevice':<16} {tc['libdevice']}")
    L.append(f"  {'PTX from':<16} {tc['ptx_backend']}; cubin by {tc['cubin']}")
    if "hint" in tc:
        L.append(f"  {tc['hint']}")
    L.append("devices:" if info["devices"] else "devices: none")
    for dev in info["devices"]:
        L.append(f"  [{dev['id']}] {dev['name']}  compute capability {dev['compute_capability']}, "
                 f"{_gib(dev['total_memory'])}, {dev['multiprocessors']} SMs")
    mm = info["memory_manager"]
    line = f"memory manager: {mm.get('class', '(no context created)')} (setting " \
           f"{mm['setting']!r} from {mm['source']})"
    if "device_free" in mm:
        line += f"; free {_gib(mm['device_free'])} of {_gib(mm['device_total'])}"
    L.append(line)
    b = info["backend"]
    names = {"gpu": "the GPU", "simulator": "the simulator",
             "none": "nothing (CudaSupportError)"}
    L.append(f"runs on: your programs -> {names[b['programs']]}; `python -m cujit demo` -> "
             f"{names[b['demo']]} ({b['why']})")
    s = info["simulator"]
    L.append(f"simulator setting: {'ON' if s['enabled'] else 'off'} (from {s['source']}); simulated "
             f"device memory {_gib(s['device_memory'])}, checks {'on' if s['checks'] else 'off'}")
    L.append("config (attribute = value [source]; environment variables, first wins):")
    for attr, c in info["config"].items():
        L.append(f"  {attr:<31} = {c['value']!r:<10} [{c['source']}]  {', '.join(c['env'])}")
    return L


def cmd_info(args):
    """``python -m cujit info``: prints the report; exit status 0."""
    out = _Output(args.json)
    info = gather_info()
    for line in format_info(info):
        out.line(line)
    out.write_json(info)
    return 0


# -- bench ----------------------------------------------------------------------------------
def _benchmarks_dir():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, "benchmarks")


def cmd_bench(args):
    """``python -m cujit bench``: runs ``benchmarks/runner.py`` (a source checkout is needed)."""
    bdir = _benchmarks_dir()
    path = os.path.join(bdir, "runner.py")
    if not os.path.exists(path):
        print(f"cujit bench: {path} not found; the benchmarks live in a source checkout "
              "(git clone, then `python -m pip install -e .`)", file=sys.stderr)
        return 2
    return load_bench_runner(path).main(args)


def load_bench_runner(path=None):
    """Import ``benchmarks/runner.py`` (not an installed package) as ``cujit_bench_runner``."""
    import importlib.util
    path = path or os.path.join(_benchmarks_dir(), "runner.py")
    spec = importlib.util.spec_from_file_location("cujit_bench_runner", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _demo_tasks():
    from .demo import TASKS
    return TASKS


def _parser():
    p = argparse.ArgumentParser(prog="python -m cujit",
                                description="cujit: Numba's CUDA programming model in Python.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="run the demo tasks, verified against NumPy")
    d.add_argument("--quick", action="store_true", help="smaller sizes")
    d.add_argument("--sim", action="store_true", help="run on the simulator even with a GPU")
    d.add_argument("--json", nargs="?", const="-", metavar="PATH",
                   help="write the results as JSON to PATH (default: stdout; the table then "
                        "goes to stderr)")
    d.add_argument("--trace", metavar="PATH",
                   help="write a memory/work timeline (Chrome trace-event JSON, for Perfetto)")
    d.add_argument("--only", nargs="+", metavar="TASK", choices=_demo_tasks(),
                   help="run only these tasks: %(choices)s")
    i = sub.add_parser("info", help="versions, driver, toolchain, devices, configuration")
    i.add_argument("--json", nargs="?", const="-", metavar="PATH", help="also write JSON")
    b = sub.add_parser("bench", help="side-by-side benchmarks (cujit, numba-cuda, CuPy)")
    b.add_argument("--quick", action="store_true", help="fewer repetitions")
    b.add_argument("--json", metavar="PATH", help="write the merged figures to PATH")
    b.add_argument("--plot", metavar="PNG", help="draw the ratio bars (needs matplotlib)")
    b.add_argument("--sides", nargs="+", metavar="SIDE",
                   help="run only these sides (cujit, bare, numba, cupy)")
    b.add_argument("--sim", action="store_true",
                   help="run the cujit side on the simulator (figures are meaningless; a "
                        "smoke test of the runner)")
    b.add_argument("--results", action="store_true",
                   help="rewrite benchmarks/RESULTS.md with this run's table and date")
    b.add_argument("--peers-python", metavar="PYTHON",
                   help="interpreter for the numba-cuda and CuPy sides (default: "
                        "$CUJIT_BENCH_PEERS_PYTHON, else this one)")
    b.add_argument("--timeout", type=float, default=300.0,
                   help="seconds each side may run (default 300)")
    from .access_cli import add_parser
    add_parser(sub)
    from .run_cli import add_parser as add_run_parser
    add_run_parser(sub)
    from .conformance import add_parser as add_conformance_parser
    add_conformance_parser(sub)
    return p


def main(argv=None):
    """Entry point; returns the process exit status (int)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:
        # the program's own options follow (``run -m pytest -x``): not for argparse
        from .run_cli import cmd_run
        return cmd_run(argv[1:])
    script_args = []
    if argv[:1] == ["access-report"] and "--" in argv:
        # the script's own arguments (argparse's subcommands do not take ``--`` well)
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    if script_args:
        args.script_args = list(args.script_args) + script_args
    from .config import config
    try:
        config.as_dict()            # a malformed environment variable: say so, no traceback
    except ValueError as exc:
        print(f"python -m cujit {args.command}: {exc}", file=sys.stderr)
        return 2
    from .access_cli import cmd_access_report
    from .conformance import cmd_conformance
    cmd = {"demo": cmd_demo, "info": cmd_info, "bench": cmd_bench,
           "access-report": cmd_access_report, "conformance": cmd_conformance}[args.command]
    try:
        return cmd(args)
    except BrokenPipeError:
        # Output piped into e.g. `head`, which has exited: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
