"""Benchmark side: numba-cuda (``python benchmarks/side_numba.py [--quick]``).

The runner starts this process with the peers' interpreter (``--peers-python`` or
``$CUJIT_BENCH_PEERS_PYTHON``): numba-cuda may need an older NumPy than cujit's environment.
Prints one JSON line."""
import sys

from bench_common import Side


def main():
    side = Side("numba", quick="--quick" in sys.argv)
    try:
        import numpy
        from numba import cuda
        import numba
        side.doc["versions"] = {"numba": numba.__version__, "numpy": numpy.__version__}
        try:
            from importlib.metadata import version
            side.doc["versions"]["numba-cuda"] = version("numba-cuda")
        except Exception:
            pass
        if not cuda.is_available():
            return side.skip("numba-cuda sees no GPU")
        import suite
    except Exception as exc:
        return side.skip(f"numba-cuda not usable: {type(exc).__name__}: {exc}")
    suite.run(side, cuda, "numba")
    side.emit()


if __name__ == "__main__":
    main()
