"""``python -m cujit bench``: run every side in its own process, merge, print the table.

Sides (each ``side_<name>.py`` prints one JSON line, see :mod:`bench_common`): ``cujit``,
``bare`` (cuda-bindings floors), ``numba`` (numba-cuda) and ``cupy``, one after the other on
the same machine in the same run.  The peers' sides (numba, cupy) run under the interpreter
named by ``--peers-python`` or ``$CUJIT_BENCH_PEERS_PYTHON`` (e.g. a virtual environment with
numba-cuda and CuPy and the NumPy they need), else under this one; nothing here names a
directory of one particular machine.

Ratios are cujit's cost over the peer's: time ÷ time, or for bandwidths the peer's GB/s ÷
cujit's — so below 1 means cujit is faster, above 1 slower, for every row alike.
"""
import datetime
import glob
import json
import re
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS_PYTHON_ENV = "CUJIT_BENCH_PEERS_PYTHON"
PEER_SIDES = ("numba", "cupy")
SIDES = ("cujit", "bare", "numba", "cupy")
PEER_COLUMNS = ("bare", "numba", "cupy")

# key -> (label, unit, target); target: ('ratio', peer, limit) | ('max', limit) | ('min', limit)
ROWS = {
    "launch_1arg_us": ("launch, 1 array arg", "us", ("ratio", "bare", 1.1)),
    "launch_5args_us": ("launch, 3 arrays + 2 scalars", "us", ("ratio", "bare", 1.1)),
    # foreign arrays, many arguments, compile chains (benchmarks/launch_rows.py)
    "launch_torch_1_us": ("launch, 1 PyTorch tensor", "us", ("ratio", "numba", 1.0)),
    "launch_torch_1_over_device_x": ("same / launch with 1 device array", "x", ("max", 1.5)),
    "launch_torch_5args_us": ("launch, 3 PyTorch tensors + 2 scalars", "us",
                              ("ratio", "numba", 1.0)),
    "launch_torch_5args_over_device_x": ("same / launch with device arrays", "x",
                                         ("max", 1.5)),
    "launch_cupy_1_us": ("launch, 1 CuPy array", "us", ("ratio", "numba", 1.0)),
    "launch_cupy_1_over_device_x": ("same / launch with 1 device array", "x", ("max", 1.5)),
    "launch_cupy_5args_us": ("launch, 3 CuPy arrays + 2 scalars", "us", ("ratio", "numba", 1.0)),
    "launch_cupy_5args_over_device_x": ("same / launch with device arrays", "x", ("max", 1.5)),
    "launch_cai_1_us": ("launch, 1 fake CAI v3 array", "us", ("ratio", "numba", 1.0)),
    "launch_cai_1_over_device_x": ("same / launch with 1 device array", "x", ("max", 1.5)),
    "launch_cai_5args_us": ("launch, 3 fake CAI v3 arrays + 2 scalars", "us",
                            ("ratio", "numba", 1.0)),
    "launch_cai_5args_over_device_x": ("same / launch with device arrays", "x", ("max", 1.5)),
    "as_cuda_array_torch_us": ("as_cuda_array(PyTorch tensor)", "us", None),
    "as_cuda_array_cai_us": ("as_cuda_array(fake CAI v3 array)", "us", None),
    "device_array_slice_us": ("device array slice d[1:]", "us", None),
    "as_cuda_array_torch_over_slice_x": ("as_cuda_array(tensor) / device-array slice", "x",
                                         ("max", 2.0)),
    "launch_16_scalars_us": ("launch, 16 scalars", "us", ("ratio", "numba", 1.0)),
    "launch_16_arrays_us": ("launch, 16 arrays", "us", ("ratio", "numba", 1.0)),
    "launch_256_scalars_us": ("launch, 256 scalars", "us", ("ratio", "numba", 1 / 18)),
    "compile_chain_1_s": ("compile+first launch, chain of 1 device function", "s",
                          ("ratio", "numba", 1.0)),
    "compile_chain_8_s": ("same, chain of 8", "s", ("ratio", "numba", 1.0)),
    "compile_chain_32_s": ("same, chain of 32", "s", ("ratio", "numba", 1.0)),
    "alloc_free_us": ("device_array(1024, f32) + drop", "us", ("ratio", "bare", 1.2)),
    "pool_alloc_free_us": ("same, pool manager (bare: pool alloc+free; CuPy: its pool)", "us",
                           ("ratio", "cupy", 1.0)),
    "to_device_4k_us": ("to_device 4 KiB (bare: alloc+copy+free)", "us", ("ratio", "bare", 1.3)),
    "copy_to_host_4k_us": ("copy_to_host 4 KiB", "us", ("max", 12.0)),
    "pinned_array_4k_us": ("pinned_array 4 KiB", "us", ("ratio", "cupy", 1.0)),
    "htod_pageable_256m_gbps": ("H->D 256 MiB pageable", "GB/s", ("min", 25.0)),
    "htod_pinned_256m_gbps": ("H->D 256 MiB pinned", "GB/s", ("min", 50.0)),
    "dtoh_pageable_256m_gbps": ("D->H 256 MiB pageable", "GB/s", ("min", 25.0)),
    "dtoh_pinned_256m_gbps": ("D->H 256 MiB pinned", "GB/s", None),
    "dtod_256m_gbps": ("D->D 256 MiB (read+write)", "GB/s", ("min", 3500.0)),
    "kernel_axpy_us": ("kernel axpy (2^26 f32)", "us", ("ratio", "numba", 1.05)),
    "kernel_matmul_us": ("kernel tiled matmul 2048^2", "us", ("ratio", "numba", 1.05)),
    "kernel_reduce_us": ("kernel reduction (2^26 f32)", "us", ("ratio", "numba", 1.05)),
    "kernel_stencil_us": ("kernel stencil 4096^2", "us", ("ratio", "numba", 1.05)),
    "kernel_stencil_coalesced_us": ("same, indices swapped as the access report says", "us",
                                    ("ratio", "numba", 1.05)),
    "access_stencil_speedup_x": ("access report's stencil fix: speed-up", "x", ("min", 2.0)),
    "kernel_matmul_conflict_free_us": ("tiled matmul 2048^2 as the access report says", "us",
                                       ("ratio", "numba", 1.05)),
    "access_matmul_speedup_x": ("access report's matmul fix: speed-up", "x", ("min", 2.0)),
    "first_launch_s": ("first compile+launch (fresh process)", "s", ("max", 0.5)),
    "lib_random_init_ms": ("random: create 10^6 xoroshiro states", "ms", ("ratio", "numba", 1.0)),
    "lib_random_uniform_us": ("random: 2^20 states x 64 uniform f32", "us",
                              ("ratio", "numba", 1.0)),
    "lib_axpy_kernel_us": ("axpy kernel into out (2^26 f32)", "us", None),
    "lib_vectorize_axpy_us": ("@vectorize axpy into out (2^26 f32)", "us",
                              ("ratio", "numba", 1.0)),
    "lib_vectorize_over_kernel": ("@vectorize axpy / same kernel", "x", ("max", 1.05)),
    "lib_reduce_sum_us": ("Reduce sum 2^26 f32 (result on host)", "us", ("ratio", "cupy", 1.2)),
    "cache_hit_launch_s": ("cache=True hit: import+load+launch (fresh process)", "s",
                           ("max", 0.15)),
    "stream_100_launches_us": ("100 small kernels on a stream, per kernel (+sync)", "us", None),
    "graph_100_launches_us": ("same, replayed as one CUDA graph, per kernel", "us", None),
    "graph_speedup_x": ("CUDA graph speed-up over stream launches", "x", ("min", 3.0)),
    # tensor cores (benchmarks/gemm.py): cujit.wmma against cuBLAS (>= 50%) and plain FMA (>= 4x)
    "gemm_wmma_tflops": ("fp16 GEMM 4096^3, cujit.wmma (CuPy: cupy.matmul, cuBLAS)", "TFLOP/s",
                         ("ratio", "cupy", 2.0)),
    "gemm_wgmma_tflops": ("fp16 GEMM 4096^3, cujit.wgmma, Hopper (CuPy: cupy.matmul, cuBLAS)",
                          "TFLOP/s", ("ratio", "cupy", 2.0)),
    "gemm_fma_tflops": ("fp16 GEMM 4096^3, plain FMA cujit kernel", "TFLOP/s", None),
    "gemm_wmma_over_fma_x": ("cujit.wmma GEMM speed-up over the FMA kernel", "x",
                             ("min", 4.0)),
    "gemm_wgmma_over_fma_x": ("cujit.wgmma GEMM speed-up over the FMA kernel", "x",
                              ("min", 4.0)),
    # two GPUs (benchmarks/multi_gpu.py; "needs 2 GPUs" in the errors with fewer)
    "peer_copy_256m_gbps": ("peer copy 256 MiB GPU0->GPU1 (bare: cuMemcpyPeerAsync)", "GB/s",
                            ("ratio", "bare", 1 / 0.9)),  # >= 90% of bare
    "multi_gpu_axpy_1gpu_us": ("axpy 2^28 f32 on one GPU, per launch", "us", None),
    "multi_gpu_axpy_2gpu_us": ("same, one thread per GPU, half the data each", "us", None),
    "multi_gpu_speedup_x": ("one thread per GPU: speed-up over one GPU", "x", ("min", 1.8)),
}


# key -> the problem size as the row's label writes it for a full run; a side reports the size
# it ran (bench_common.Side.measure(size=...)) and the label shows that one instead
LABEL_SIZES = {
    "htod_pageable_256m_gbps": "256 MiB", "htod_pinned_256m_gbps": "256 MiB",
    "dtoh_pageable_256m_gbps": "256 MiB", "dtoh_pinned_256m_gbps": "256 MiB",
    "dtod_256m_gbps": "256 MiB", "kernel_axpy_us": "2^26 f32", "kernel_matmul_us": "2048^2",
    "kernel_reduce_us": "2^26 f32", "kernel_stencil_us": "4096^2",
    "kernel_matmul_conflict_free_us": "2048^2", "lib_random_init_ms": "10^6",
    "lib_random_uniform_us": "2^20 states x 64", "lib_axpy_kernel_us": "2^26 f32",
    "lib_vectorize_axpy_us": "2^26 f32", "lib_reduce_sum_us": "2^26 f32",
    "peer_copy_256m_gbps": "256 MiB", "multi_gpu_axpy_1gpu_us": "2^28 f32",
    "gemm_wmma_tflops": "4096^3", "gemm_wgmma_tflops": "4096^3", "gemm_fma_tflops": "4096^3",
}


def ran_size(merged, key):
    """The size figure ``key`` ran at, as a side reported it (cujit's first), or None."""
    sides = merged["sides"]
    for name in ("cujit",) + tuple(n for n in sides if n != "cujit"):
        size = (sides.get(name) or {}).get("sizes", {}).get(key)
        if size:
            return size
    return None


def sized_label(key, label, size):
    """``label`` with its full-run problem size replaced by ``size`` (the one that ran)."""
    if size is None or key not in LABEL_SIZES:
        return label
    return label.replace(LABEL_SIZES[key], size)


# -- running the sides ----------------------------------------------------------------------
def peers_python(option=None):
    """The interpreter that runs the peers' sides: ``option`` (``--peers-python``), else
    ``$CUJIT_BENCH_PEERS_PYTHON``, else this interpreter.  Raises ``ValueError`` naming the
    path and where it came from when it is not an executable file."""
    for value, origin in ((option, "--peers-python"),
                          (os.environ.get(PEERS_PYTHON_ENV), PEERS_PYTHON_ENV)):
        if value:
            if not (os.path.isfile(value) and os.access(value, os.X_OK)):
                raise ValueError(f"{origin}={value!r} is not an executable Python interpreter")
            return value
    return sys.executable


def side_command(side, quick, python=None):
    """``(argv, env)`` that runs one side; ``python``: the peers' interpreter (numba, cupy
    sides), default :func:`peers_python`.  The cujit and bare sides run under this interpreter
    with the repository first on ``PYTHONPATH``; the peers' sides get the environment as is."""
    exe = (python or peers_python()) if side in PEER_SIDES else sys.executable
    argv = [exe, os.path.join(HERE, f"side_{side}.py")] + (["--quick"] if quick else [])
    env = dict(os.environ)
    if side in PEER_SIDES:
        return argv, env
    env["PYTHONPATH"] = ROOT + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ROOT
    return argv, env


def parse_side_output(side, returncode, stdout, stderr):
    """The side's JSON document from its output; a crashed side becomes a skipped one."""
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    tail = (stderr or stdout).strip().splitlines()[-3:]
    return {"side": side, "figures": {}, "errors": {}, "versions": {}, "device": None,
            "skipped": f"crashed (exit {returncode}): {' | '.join(tail)}"}


def run_side(side, quick, timeout, python=None):
    argv, env = side_command(side, quick, python)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                           cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"side": side, "figures": {}, "errors": {}, "versions": {}, "device": None,
                "skipped": f"timed out after {timeout:g} s"}
    return parse_side_output(side, p.returncode, p.stdout, p.stderr)


# -- merging and the table ------------------------------------------------------------------
def merge(docs):
    """``{'sides': {name: doc without figures}, 'figures': {key: {side: value}}}``."""
    merged = {"sides": {}, "figures": {}}
    for doc in docs:
        name = doc["side"]
        merged["sides"][name] = {k: v for k, v in doc.items() if k != "figures"}
        for key, value in doc.get("figures", {}).items():
            merged["figures"].setdefault(key, {})[name] = value
    return merged


# units where more is better: the cost ratio is the peer's figure over cujit's
_THROUGHPUTS = ("GB/s", "TFLOP/s")


def _unit(key):
    return ROWS[key][1] if key in ROWS else ("GB/s" if key.endswith("_gbps") else
                                             "s" if key.endswith("_s") else "us")


def cost_ratio(key, mine, theirs):
    """cujit's cost relative to a peer's (below 1: cujit faster); None when not computable."""
    if mine is None or theirs is None or mine <= 0 or theirs <= 0:
        return None
    return theirs / mine if _unit(key) in _THROUGHPUTS else mine / theirs


def target_text(target):
    if target is None:
        return ""
    if target[0] == "ratio":
        return f"<= {target[2]:g}x {target[1]}"
    return f"{'<=' if target[0] == 'max' else '>='} {target[1]:g}"


def meets(target, value, ratios):
    """True/False when the target can be judged, else None."""
    if target is None or value is None:
        return None
    if target[0] == "ratio":
        r = ratios.get(target[1])
        return None if r is None else r <= target[2]
    return value <= target[1] if target[0] == "max" else value >= target[1]


def build_table(merged):
    """One dict per row: key, label, unit, one value per side, ratios vs each peer, target,
    meets.  Rows in :data:`ROWS` order, then any extra keys a side reported."""
    figures = merged["figures"]
    keys = [k for k in ROWS if k in figures] + sorted(k for k in figures if k not in ROWS)
    rows = []
    for key in keys:
        label, unit, target = ROWS.get(key, (key, _unit(key), None))
        size = ran_size(merged, key)
        label = sized_label(key, label, size)
        vals = figures[key]
        mine = vals.get("cujit")
        ratios = {p: cost_ratio(key, mine, vals.get(p)) for p in PEER_COLUMNS}
        rows.append({"key": key, "label": label, "unit": unit, "size": size,
                     **{s: vals.get(s) for s in SIDES},
                     "ratios": ratios, "target": target_text(target),
                     "meets": meets(target, mine, ratios)})
    return rows


def _num(v, unit):
    if v is None:
        return "-"
    if unit == "s":
        return f"{v:.3f}"
    return f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def format_table(rows):
    """The table as GitHub markdown (also readable in a terminal)."""
    head = ["benchmark", "unit", "cujit", "bare", "numba-cuda", "CuPy",
            "vs bare", "vs numba", "vs CuPy", "target", "ok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratios = [("-" if r["ratios"][p] is None else f"{r['ratios'][p]:.2f}x")
                  for p in PEER_COLUMNS]
        ok = {True: "yes", False: "NO", None: ""}[r["meets"]]
        cells = [r["label"], r["unit"]] + [_num(r[s], r["unit"]) for s in SIDES] + ratios + \
                [r["target"], ok]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readme_block(merged, rows, when=None):
    """Markdown for the README: a heading with device and date, then :func:`headline`."""
    when = when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    devices = sorted({d.get("device") for d in merged["sides"].values() if d.get("device")})
    head = f"Measured on {', '.join(devices) or '?'}, {when} (`python -m cujit bench`; " \
           "ratios are cujit's cost over the peer's, below 1 is faster; full table in " \
           "benchmarks/RESULTS.md):"
    return "\n".join([head, ""] + headline(rows))


def headline(rows):
    """A few ready-to-paste lines for the README: the rows that have a target, each with
    cujit's figure or ratio against the target, then its ratios to the other peers."""
    out = []
    for r in rows:
        t = ROWS.get(r["key"], (None, None, None))[2]
        if not t:
            continue
        if t[0] == "ratio" and r["ratios"].get(t[1]) is not None:
            text = f"- {r['label']}: {r['ratios'][t[1]]:.2f}x {_PEER_NAMES[t[1]]}"
        elif t[0] != "ratio" and r["cujit"] is not None:
            text = f"- {r['label']}: {_num(r['cujit'], r['unit'])} {r['unit']}"
        else:
            continue
        text += f" (target {r['target']}{'' if r['meets'] is not False else ', MISSED'})"
        others = [f"{r['ratios'][p]:.2f}x {_PEER_NAMES[p]}" for p in PEER_COLUMNS
                  if r["ratios"].get(p) is not None and not (t[0] == "ratio" and p == t[1])]
        if others:
            text += "; " + ", ".join(others)
        out.append(text)
    return out


_PEER_NAMES = {"bare": "bare driver", "numba": "numba-cuda", "cupy": "CuPy"}


def plot(rows, path):
    """Ratio bars into ``path`` (PNG): for each row, one bar per peer from 1 (parity) to the
    cost ratio on a log axis, so bars left of 1 are where cujit is faster.  Needs matplotlib
    (``pip install 'cujit[plot]'``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter
    rows = [r for r in rows if any(v is not None for v in r["ratios"].values())]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 1.5))
    h = 0.8 / len(PEER_COLUMNS)
    for j, peer in enumerate(PEER_COLUMNS):
        pts = [(i + (j - 1) * h, r["ratios"][peer]) for i, r in enumerate(rows)
               if r["ratios"][peer] is not None]
        if pts:
            ax.barh([y for y, _ in pts], [x - 1.0 for _, x in pts], left=1.0, height=h,
                    label=f"vs {_PEER_NAMES[peer]}")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["label"] for r in rows])
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    fmt = FuncFormatter(lambda v, _: f"{v:g}x")
    ax.xaxis.set_major_formatter(fmt)
    ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels on a log axis overlap
    ax.set_xlabel("cujit cost / peer cost (left of 1x: cujit faster)")
    ax.invert_yaxis()
    if rows:                        # a run without peers (e.g. --sim) has no bars to label
        ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def smoke_warning(merged):
    """A warning line when any side ran on a simulator (its figures mean nothing), else ''."""
    # a skipped side ran nothing, on the simulator or elsewhere: it is not named here
    smoke = sorted(n for n, d in merged["sides"].items()
                   if d.get("smoke") and not d.get("skipped"))
    if not smoke:
        return ""
    return (f"SMOKE RUN: side(s) {', '.join(smoke)} ran on the simulator with tiny sizes; "
            "their figures only show that every measurement works, not how fast anything is.")


# the GPU problem sizes named in ROWS labels: "(2^26 f32)", "2048^2", "4096^3", "256 MiB"
_GPU_SIZE = re.compile(r"\(2\^\d+ \w+\)|\b\d+\^[23]\b|\b\d+ [MG]iB\b")


def smoke_rows(rows):
    """The rows of a smoke run as they should be shown: no target verdict (a simulator cannot
    miss or meet a GPU target); a label whose side reported no size (``row["size"]``, already
    in the label) has its GPU problem size ("2^26 f32") replaced by "smoke size"."""
    out = []
    for r in rows:
        label = r["label"] if r.get("size") else _GPU_SIZE.sub("", r["label"])
        if label != r["label"]:
            label = " ".join(label.split()) + " [smoke size]"
        out.append(dict(r, label=label, meets=None, target="-"))
    return out


KEEP_MARKER = "<!-- kept across `bench --results`: results of other benchmarks -->"


def results_markdown(merged, rows, when=None, picture=None):
    """The text of ``benchmarks/RESULTS.md`` for this run; ``picture``: a path relative to
    ``benchmarks/`` of the ratio plot to link (``bench --plot`` with ``--results``)."""
    when = when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    devices = {d.get("device") for d in merged["sides"].values() if d.get("device")}
    vers = ", ".join(f"{k} {v}" for d in merged["sides"].values()
                     for k, v in (d.get("versions") or {}).items())
    skipped = [f"{n}: {d['skipped']}" for n, d in merged["sides"].items() if d.get("skipped")]
    parts = [f"# Benchmark results\n\nLatest run: {when} on {', '.join(sorted(devices)) or '?'}"
             f" (`python -m cujit bench`).\n\nVersions: {vers}.\n",
             "Medians: microseconds (us), GB/s (10^9 B/s), TFLOP/s (10^12 flop/s), seconds (s).  "
             "Ratios are cujit's cost over the peer's (below 1: cujit faster).\n"]
    if smoke_warning(merged):
        parts.append(f"**{smoke_warning(merged)}**\n")
    parts += [format_table(rows), ""]
    if picture:
        parts.append(f"The ratios as a picture: [{os.path.basename(picture)}]({picture}).\n")
    if skipped:
        parts.append("Sides not run: " + "; ".join(skipped) + "\n")
    return "\n".join(parts)


def main(args):
    """Run the sides named in ``args.sides`` (default all), print, write JSON/plot/results."""
    sides = args.sides or list(SIDES)
    unknown = [s for s in sides if s not in SIDES]
    if unknown:
        print(f"unknown side(s) {unknown}; expected some of {list(SIDES)}", file=sys.stderr)
        return 2
    try:
        python = peers_python(getattr(args, "peers_python", None))
    except ValueError as exc:
        print(f"cujit bench: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "sim", False):
        os.environ["CUJIT_ENABLE_CUDASIM"] = "1"
    docs = []
    for side in sides:
        print(f"running side {side} ...", file=sys.stderr, flush=True)
        doc = run_side(side, args.quick, args.timeout, python=python)
        if doc.get("skipped"):
            print(f"  {side}: skipped - {doc['skipped']}", file=sys.stderr)
        for key, err in (doc.get("errors") or {}).items():
            print(f"  {side}: {key} failed - {err}", file=sys.stderr)
        docs.append(doc)
    merged = merge(docs)
    rows = build_table(merged)
    warning = smoke_warning(merged)
    if warning:
        rows = smoke_rows(rows)
        print(warning)
    print(format_table(rows))
    if not merged["figures"]:
        print("nothing was measured: no side could run here (no GPU?); `python -m cujit bench "
              "--sim` runs a smoke test of the cujit side on the simulator", file=sys.stderr)
        return 1
    if not warning:     # a smoke run's figures never go into the README
        print("\nREADME block:\n")
        print(readme_block(merged, rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"merged": merged, "rows": rows}, f, indent=2)
    picture = None
    if args.plot:
        try:
            plot(rows, args.plot)
        except ImportError:
            print("cujit bench --plot needs matplotlib, which is not installed here: "
                  "pip install 'cujit[plot]' (the table above is complete without it)",
                  file=sys.stderr)
            return 2
        picture = os.path.relpath(os.path.abspath(args.plot), HERE).replace(os.sep, "/")
        if getattr(args, "results", False) and picture.startswith("../"):
            # RESULTS.md links a file of the repository, so a picture drawn elsewhere (a
            # device's output folder) is copied next to it
            import shutil
            picture = os.path.basename(args.plot)
            shutil.copyfile(args.plot, os.path.join(HERE, picture))
    if getattr(args, "results", False):
        path = os.path.join(HERE, "RESULTS.md")
        kept = ""
        if os.path.exists(path):
            # Results recorded by other benchmarks (e.g. the simulator's, on a CPU machine)
            # live below KEEP_MARKER and survive a rewrite of the GPU table.
            with open(path) as f:
                old = f.read()
            if KEEP_MARKER in old:
                kept = "\n" + old[old.index(KEEP_MARKER):]
        with open(path, "w") as f:
            f.write(results_markdown(merged, rows, picture=picture) + kept)
    return 0
