import argparse
import sys

import vrs_edu.bench as pkg
from vrs_edu.bench import depth, notebooks, real_decoder, recipes, stalls, training

# Every section of `make bench`, in the order it runs (a new one is listed here).
SECTIONS = {"depth": depth, "notebooks": notebooks, "real_decoder": real_decoder, "recipes": recipes,
            "stalls": stalls, "training": training}


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.bench", description=pkg.__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="*", help=f"any of {list(SECTIONS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run, numbers are noisier)")
    args = ap.parse_args()
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown sections {unknown}; choose from {list(SECTIONS)}")
    for name in args.sections or SECTIONS:
        print(f"\n=== {name} ===", flush=True)
        SECTIONS[name].run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
