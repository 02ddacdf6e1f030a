"""Benchmarks (`make bench`): measured side by side in one run, printed as ratios. Never wall-clock assertions.

Sections (each a module with ``run(args) -> None``): ``training`` (TinyGPT step vs a plain reference, variant
overheads, FLOP/s), ``depth`` (depth ShortSWA vs full-window cost), ``notebooks`` (each chapter's execution time next to
its book.toml budget), ``recipes`` (each reproduce recipe's recorded full-run time and a timed ``--quick`` run, next to
their 20-minute and 2-minute budgets). ``python -m vrs_edu.bench [section ...]`` runs the named ones (default: all).
"""
