"""Benchmark side: cujit (``python benchmarks/side_cujit.py [--quick]``); prints one JSON line."""
import sys

from bench_common import Side


def main():
    side = Side("cujit", quick="--quick" in sys.argv)
    try:
        import cujit as cuda
        import suite
        side.doc["versions"] = {"cujit": cuda.__version__}
        if not cuda.is_available():
            return side.skip("no usable GPU for cujit (cujit.is_available() is False)")
    except Exception as exc:
        return side.skip(f"cujit not usable: {type(exc).__name__}: {exc}")
    suite.run(side, cuda, "cujit")
    side.emit()


if __name__ == "__main__":
    main()
