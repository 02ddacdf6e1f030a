import argparse
import importlib
import pkgutil
import sys

import vrs_edu.bench as pkg

SECTIONS = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.bench", description=pkg.__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="*", help=f"any of {SECTIONS} (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run, numbers are noisier)")
    args = ap.parse_args()
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    for name in args.sections or SECTIONS:
        print(f"\n=== {name} ===", flush=True)
        importlib.import_module(f"vrs_edu.bench.{name}").run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
