"""Benchmarks (`make bench`): measured side by side in one run, printed as ratios. Never wall-clock assertions.

Sections (each a module with ``run(args) -> None``): ``training`` (TinyGPT's fast-path step vs a nanoGPT-style SDPA
reference, its explicit hooked path vs the fast path, variant overheads, FLOP/s; one thread), ``depth`` (depth
ShortSWA vs full-window cost), ``notebooks`` (each chapter's execution time next to its book.toml budget), ``recipes``
(``--jobs 2`` vs one after another at 2 threads on a reduced set of runs; each reproduce recipe's recorded full-run
time and a timed ``--quick`` run, next to their 20-minute and 2-minute budgets). ``python -m vrs_edu.bench [section ...]`` runs the named ones (default: all).
"""
