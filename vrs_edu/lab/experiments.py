"""Reproduce recipes: long runs whose results the notebooks load from ``data/results/<name>.json``.

A recipe (:class:`Recipe`) names a function ``fn(quick: bool, seeds: list[int], *, options: RunOptions) -> dict``;
``options`` (:class:`~vrs_edu.lab.options.RunOptions`, the command's flags) go to every run it trains. Every recipe
is listed in one table, :data:`vrs_edu.recipes.RECIPES`. The runner (:func:`run_recipe`, the ``vrs-edu reproduce
NAME`` command) adds what makes a result file honest: the command
that made it, the seeds, the package and torch versions, the thread count, the machine, the date, the wall time
and the CPU time.
``--quick`` runs the same code at a size that finishes in about a minute (for tests); its file is named
``<name>.quick.json`` so a quick run never overwrites a full one.
A recipe that trains on text takes ``corpus`` and ``tokenizer`` keywords (``vrs-edu reproduce NAME --corpus FILE
--tokenizer word``); its file is then ``<name>.corpus-<stem>[.tokenizer-<kind>][.quick].json`` (see
:mod:`vrs_edu.lab.corpora`), and :func:`load_results` reads those files when ``VRS_EDU_CORPUS=<stem>`` is set.
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import torch

from vrs_edu import __version__
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.corpora import DEFAULT_NAME, NAMED, Corpus, corpus_token_data, get_corpus, named_corpus, run_suffix
from vrs_edu.lab.data import TOKENIZERS, SyntheticTask, unigram_loss
from vrs_edu.lab.metrics import coefficient_readout, layer_metrics, substitution_ablation
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.parallel import map_runs, usable_jobs
from vrs_edu.lab.presets import scaled_run
from vrs_edu.lab.results import to_json
from vrs_edu.lab.train import evaluate, make_optimizer, optimizer_settings, save_checkpoint, train
from vrs_edu.lab.x0_need import x0_gradient_pressure, x0_removal_cost
from vrs_edu.nn.model import TinyGPT

RESULTS_DIR = Path(__file__).resolve().parents[2] / "data" / "results"
CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / "data" / "checkpoints"


@dataclass(frozen=True)
class Recipe:
    """One ``vrs-edu reproduce NAME`` recipe. ``fn(quick, seeds, *, options) -> dict`` builds its runs with
    :func:`~vrs_edu.lab.presets.scaled_run` and passes ``options`` on to :func:`compare_variants` (or ``train``), so
    the command's device, checkpoints, jobs, ``--preset`` and ``--set`` reach every run. ``text``: the recipe trains
    on text, and ``fn`` takes the keywords ``corpus`` (a :class:`~vrs_edu.lab.corpora.Corpus` or None for the
    default) and ``tokenizer`` (a kind or None for the preset's). ``verdicts(result)``: its declared tests judged on
    a stored result (``vrs-edu rejudge``), None for a recipe that declares none. Every recipe is listed in one
    table, :data:`vrs_edu.recipes.RECIPES`."""

    name: str
    fn: Callable[..., dict]
    about: str
    default_seeds: tuple[int, ...] = (0, 1, 2)
    budget_s: float = 20 * 60     # a full run's wall-time budget on the 2-core course machine (``make bench``)
    text: bool = False
    verdicts: Callable[[dict], list] | None = None


# The recipes on a synthetic task: one result file each, whatever corpus the chapters read (``VRS_EDU_CORPUS``).
# The same as the recipes of :data:`vrs_edu.recipes.RECIPES` with ``text=False`` (a test keeps the two equal).
SYNTHETIC_RECIPES = ("recall", "recall-rates", "recall-tuning")


def environment_info() -> dict:
    return {"vrs_edu": __version__, "torch": torch.__version__, "python": platform.python_version(),
            "threads": torch.get_num_threads(), "machine": platform.machine(), "processor": platform.processor(),
            "cpu_count": os.cpu_count()}


def _load_average() -> float | None:
    """The 1-minute load average (None where the OS has none): a wall time measured on a busy machine says so."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def git_state(root: str | Path | None = None) -> dict | None:
    """``{"commit", "dirty"}`` of the checkout the package runs from (``root``: the repository folder; default the
    package's parent): the commit of the code that made a result, and whether tracked files differed from it
    (``git status --porcelain --untracked-files=no``; a dirty tree means the numbers may come from code no commit
    holds). None outside a git checkout or without git."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True, timeout=30).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(status.strip())}


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished child processes (the workers of ``--jobs``)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def results_path(name: str, quick: bool = False, out_dir: str | Path | None = None, corpus: str | None = None,
                 tokenizer: str | None = None) -> Path:
    """``<out_dir>/<name>[.corpus-<corpus>][.tokenizer-<tokenizer>][.quick].json`` (``corpus``: the short name
    of :class:`~vrs_edu.lab.corpora.Corpus`; None for the default corpus)."""
    return Path(out_dir or RESULTS_DIR) / f"{name}{run_suffix(corpus, tokenizer)}{'.quick' if quick else ''}.json"


def trains_on_text(name: str) -> bool:
    """Whether recipe ``name`` trains on text (its result files are per corpus): not one of
    :data:`SYNTHETIC_RECIPES`."""
    return name not in SYNTHETIC_RECIPES


def run_recipe(recipe: Recipe, quick: bool = False, seeds: list[int] | None = None,
               out_dir: str | Path | None = None, corpus: str | Path | Corpus | None = None,
               tokenizer: str | None = None, options: RunOptions | None = None, command_flags: Sequence[str] = (),
               extra: dict | None = None) -> Path:
    """Run ``recipe`` and write its JSON result, once. Returns the file's path.

    ``options`` (None: the defaults) are handed to the recipe: how and where its runs train (device, checkpoints,
    ``jobs`` worker processes, progress bars) and, with ``options.preset``/``options.settings``, at what size.

    ``corpus`` (a name in :data:`vrs_edu.lab.corpora.NAMED` or a UTF-8 text file) and ``tokenizer`` (char, word or
    bpe) replace the default corpus and the preset's tokenizer in the recipe's text runs; both are checked before
    any training, recorded in the result (``text_corpus``: name, source, bytes, sha256, licence) and in the file
    name (:func:`results_path`), so the default results are never overwritten.

    ``command_flags``: the command-line flags that changed the numbers (``--seeds``, ``--preset``, ``--set``,
    ``--device`` …), added to the recorded command so that it makes the same numbers again; ``extra``: more
    top-level entries of the result (the command's ``scale``: device, processes, resumed).

    Raises:
        ValueError: ``corpus``/``tokenizer`` for a recipe that does not train on text; an unknown tokenizer; a
            corpus file that is a folder, empty, binary or not UTF-8 (one line naming the file).
        FileNotFoundError: a corpus file that does not exist.
    """
    r, name = recipe, recipe.name
    text_recipe = r.text
    if not text_recipe and (corpus is not None or tokenizer is not None):
        raise ValueError(f"recipe {name!r} does not train on text: --corpus and --tokenizer do not apply to it")
    if tokenizer is not None and tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
    text = None if corpus is None else get_corpus(corpus)  # checked here, before any training
    seeds = list(r.default_seeds if seeds is None else seeds)
    if len(set(seeds)) != len(seeds):   # a repeated seed trains the same run twice and counts it as two
        raise ValueError(f"seeds must be distinct, got {seeds}")
    load_before = _load_average()
    code = git_state()            # before any file is written: which code made the numbers
    options = options or RunOptions()
    jobs = usable_jobs(options)   # worker processes for the recipe's runs (`reproduce --jobs`)
    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    text_kw = {"corpus": text, "tokenizer": tokenizer} if text_recipe else {}
    payload = r.fn(quick, seeds, options=options, **text_kw)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
    cmd = f"vrs-edu reproduce {name}" + (" --quick" if quick else "")
    cmd += f" --corpus {shlex.quote(text.argument)}" if text is not None else ""
    cmd += f" --tokenizer {tokenizer}" if tokenizer else ""
    cmd += " " + shlex.join(command_flags) if command_flags else ""
    result = {"recipe": name, "about": r.about, "command": cmd, "quick": quick, "seeds": seeds,
              "wall_time_s": round(wall, 1), "cpu_time_s": round(cpu, 1),
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "environment": {**environment_info(), "jobs": jobs,
                              "load_average_1m": [load_before, _load_average()]},
              "git": code, **payload}
    epochs = {k: v["epochs_read"] for k, v in payload.items() if isinstance(v, dict) and "epochs_read" in v}
    if epochs:   # how many times each part's runs read their training split (None: a synthetic task)
        result["epochs_read"] = epochs
    if text_recipe:  # which text the numbers come from (the default's record too, so every file says)
        result["text_corpus"] = (text or named_corpus(DEFAULT_NAME)).record()
    result.update(extra or {})
    path = results_path(name, quick, out_dir, None if text is None else text.name, tokenizer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=to_json) + "\n")   # typed results: to_dict
    return path


def load_results(name: str, quick: bool = False, out_dir: str | Path | None = None,
                 corpus: str | None = None) -> dict:
    """Read a result file, with a clear error naming the command that makes it when it is missing.

    ``corpus`` (a corpus' short name, e.g. ``kjv`` or a teacher's file stem) reads the runs on that corpus; when
    it is None the environment variable ``VRS_EDU_CORPUS`` gives it, so a teacher re-points every chapter at the
    results of their own corpus with one setting (README, teacher's guide). Empty or unset: the default corpus.
    A recipe that does not train on text (``recall``) ignores both.
    """
    synthetic = not trains_on_text(name)   # a synthetic task has one result file
    corpus = None if synthetic else chosen_corpus(corpus)
    path = results_path(name, quick, out_dir, corpus)
    if not path.exists():
        how = "" if not corpus else f" --corpus {corpus}" if corpus in NAMED else f" --corpus <your {corpus} file>"
        raise FileNotFoundError(f"{path} does not exist: run `vrs-edu reproduce {name}{how}"
                                f"{' --quick' if quick else ''}`")
    return json.loads(path.read_text())


def load_results_or_none(name: str, corpus: str | None = None, out_dir: str | Path | None = None,
                         say=None) -> dict | None:
    """:func:`load_results`, or None when the result file is not made yet; then ``say`` (e.g. ``print`` or a
    chapter's Markdown writer), when given, receives one line naming the command that makes it:
    ``"<name>: not made yet (`vrs-edu reproduce <name> …`)"``. Chapters whose later sections need an optional
    result call this instead of catching the error themselves. Any other fault (a damaged file) still raises."""
    try:
        return load_results(name, out_dir=out_dir, corpus=corpus)
    except FileNotFoundError as e:
        if say is not None:
            command = str(e).split("run ", 1)[-1]
            say(f"{name}: not made yet ({command})")
        return None


def chosen_corpus(corpus: str | None = None) -> str | None:
    """``corpus``, else the environment variable ``VRS_EDU_CORPUS``, else None (the default corpus; an empty
    variable counts as unset): the corpus whose results and checkpoints the chapters read."""
    return corpus or os.environ.get("VRS_EDU_CORPUS") or None


def provenance(result: dict, lang: str | None = None) -> str:
    """The line a chapter prints above numbers it loads: which command made them, when, how long it ran (wall time
    in s below 2 minutes, else min; CPU time where recorded), on how many torch threads, with which seeds. Two or
    more lines (the details indented, broken between details) when one would be longer than 100 characters.
    ``lang``: the edition (None: the running notebook's).

    Raises:
        KeyError: ``result`` lacks ``command``, ``date``, ``wall_time_s`` or ``environment`` (not a recipe result).
    """
    ko = resolve_language(lang) == "ko"
    wall, jobs = result["wall_time_s"], result["environment"].get("jobs", 1)
    if ko:
        parts = [f"실행 시간 {wall:.0f}초" if wall < 120 else f"실행 시간 {wall / 60:.1f}분"]
        parts += [f"CPU 시간 {result['cpu_time_s'] / 60:.1f}분"] if "cpu_time_s" in result else []
        parts.append(f"동시 실행 {jobs}개, 각각 torch 스레드 1개" if jobs > 1
                     else f"torch 스레드 {result['environment']['threads']}개")
    else:
        parts = [f"{wall:.0f} s wall time" if wall < 120 else f"{wall / 60:.1f} min wall time"]
        parts += [f"{result['cpu_time_s'] / 60:.1f} CPU-minutes"] if "cpu_time_s" in result else []
        parts.append(f"{jobs} runs at a time, 1 torch thread each" if jobs > 1
                     else f"{result['environment']['threads']} torch thread(s)")
    if result.get("seeds"):
        parts.append(f"{'시드' if ko else 'seeds'} {result['seeds']}")
    head = (f"{result['date'][:10]}에 `{result['command']}` 명령으로 만들었습니다:" if ko
            else f"made by `{result['command']}` on {result['date'][:10]}:")
    line = f"{head} " + ", ".join(parts)
    if len(line) <= 100:   # chapters print it: a longer line goes on two, so that it fits the book's page
        return line
    rows = ["    " + parts[0]]
    for part in parts[1:]:      # break between the details, never inside one (a seed list stays whole)
        if len(rows[-1]) + 2 + len(part) <= 100:
            rows[-1] += ", " + part
        else:
            rows[-1] += ","
            rows.append("    " + part)
    return f"{head}\n" + "\n".join(rows)


def models_dir(options: RunOptions | None = None) -> Path:
    """Where a recipe saves the models it trains: ``options.models_dir`` (``reproduce --out DIR`` makes it
    ``DIR/checkpoints``, or ``--checkpoint-dir``), else the repository's ``data/checkpoints/`` that the chapters
    read."""
    return Path(options.models_dir) if options is not None and options.models_dir else CHECKPOINT_DIR


# ---------------------------------------------------------------------------------------------------------------
# The shared experiment: train variants of one preset on the same data, same seeds, same batches.


def run_variants(preset: str, variants: dict[str, dict], seeds: list[int], data, measure: Callable[..., dict], *,
                 overrides: dict | None = None, options: RunOptions | None = None, desc: str = "",
                 jobs: int | None = None, per_run: Callable[[str, int], dict] | None = None,
                 **common) -> tuple[dict[str, list[dict]], dict[str, dict]]:
    """The one runner of the recipes: variants × seeds → worker processes → train → measure.

    Every variant (config overrides on ``preset``, applied after ``overrides``; ``options.preset``/``settings``
    last, :func:`~vrs_edu.lab.presets.scaled_run`) is built for every seed with the vocabulary of ``data`` and
    handed to ``measure(mcfg, tcfg, data, desc, progress, options, **common, **per_run(variant, seed))``, a
    module-level function (a worker process runs it) that trains the model and returns what the result file keeps
    of the run. ``jobs`` worker processes run the tasks side by side, one torch thread each
    (:func:`~vrs_edu.lab.parallel.map_runs`; None: ``options.jobs``); the numbers equal those of one run after
    another in this process.

    Returns ``(runs, configs)``: ``{variant: [measure's dict per seed, in seed order]}`` and ``{variant: {"model":
    ..., "train": ...}}`` (the last seed's configs, which differ between seeds only in the seed).
    """
    options = options or RunOptions()
    tasks, names, configs = [], [], {}
    for vname, vover in variants.items():
        for seed in seeds:
            _, mcfg, tcfg = scaled_run(preset, options, **{**(overrides or {}), **vover}, seed=seed)
            mcfg = replace(mcfg, vocab_size=data.vocab_size, seed=seed)
            tasks.append({"mcfg": mcfg, "tcfg": tcfg, "data": data, "desc": f"{desc}{vname} s{seed}",
                          "options": options, **common, **(per_run(vname, seed) if per_run else {})})
            names.append(vname)
            configs[vname] = {"model": mcfg.to_dict(), "train": tcfg.__dict__}
    jobs = usable_jobs(options, jobs)
    for t in tasks:   # a worker draws no bar of its own: the overall bar counts finished runs
        t["progress"] = jobs == 1
    results = map_runs(measure, tasks, jobs, desc=f"{desc}runs", progress=options.progress)
    runs: dict[str, list[dict]] = {vname: [] for vname in variants}
    for vname, run in zip(names, results):
        runs[vname].append(run)
    return runs, configs


def compare_variants(preset: str, variants: dict[str, dict], seeds: list[int], *, quick: bool = False,
                     quick_steps: int = 60, corpus: str | None = None, ablation: bool | Collection[str] = False,
                     checkpoint_as: str | None = None, metric_batches: int = 4, desc: str = "",
                     checkpoint_for: Collection[str] | None = None, jobs: int | None = None,
                     task: SyntheticTask | None = None, tokenizer: str | None = None,
                     options: RunOptions | None = None, final_eval: bool = False, x0_need: bool = False) -> dict:
    """Train every variant (config overrides on ``preset``) for every seed and measure it.

    ``final_eval``: after training, evaluate each corpus run once more on the *whole* validation split (its
    ``final_val_loss``; the curve's last point, on the config's ``eval_batches``, is kept as
    ``curve_final_val_loss``) and on the first :data:`TRAIN_EVAL_BATCHES` batches of the training split
    (``final_train_loss``: the loss on text the run may have read, beside the validation loss). ``x0_need``:
    measure the need for x0 (:func:`~vrs_edu.lab.x0_need.x0_removal_cost` on ``x0_mode="qkv"`` runs,
    :func:`~vrs_edu.lab.x0_need.x0_gradient_pressure` on runs without x0 paths), on the metric batches. The
    part records ``epochs_read`` per variant (tokens one run reads / training tokens; None on a synthetic task,
    whose every batch is new) and ``tokens_per_step``.

    Same seed ⇒ same initial weights for every parameter two variants share (see ``TinyGPT._init_weights``) and
    the same batches in the same order, so per-seed differences are paired. For each run it records the loss
    history, the coefficient trajectories, per-layer metrics on ``metric_batches`` validation batches, optionally
    the substitution ablation (``ablation``: True for every variant, or a collection of variant names), and (first
    seed, full runs, when ``checkpoint_as`` is set) a safetensors checkpoint under
    ``<models_dir>/<checkpoint_as>/<variant>/`` for every variant in ``checkpoint_for`` (None: all); ``models_dir``
    is ``data/checkpoints`` unless ``options.models_dir`` says otherwise (:func:`models_dir`).

    The runs (variants × seeds) are independent: ``jobs`` worker processes train them side by side, one torch
    thread each (:func:`~vrs_edu.lab.parallel.map_runs`); None takes ``options.jobs`` (``vrs-edu reproduce
    --jobs``, 1 by default). The numbers equal those of a one-thread run in this process. ``options`` (None: the
    defaults) go to every run's ``train`` call; with ``options.preset``/``options.settings`` the runs are built at
    that size (:func:`~vrs_edu.lab.presets.scaled_run`).

    With ``task`` (a :class:`~vrs_edu.lab.data.SyntheticTask`) the runs train on it instead of the corpus: only the
    task's masked (answer) positions are scored, and the metric batches are drawn with seed ``20_000 + seed``.
    Otherwise ``corpus`` (a :class:`~vrs_edu.lab.corpora.Corpus`, a name or a file path; None: the default corpus)
    and ``tokenizer`` (None: the preset's) choose the text; a checkpoint then goes to
    ``<checkpoint_as>.corpus-<name>`` so the chapters' checkpoints are never overwritten.
    """
    options = options or RunOptions()
    base_preset, _, _ = scaled_run(preset, options)
    overrides = {"steps": quick_steps, "eval_every": max(10, quick_steps // 3), "eval_batches": 4} if quick else {}
    _, mcfg0, _ = scaled_run(preset, options, **overrides)
    corpus = None if corpus is None else get_corpus(corpus)
    kind = tokenizer or base_preset.tokenizer
    data = task if task is not None else corpus_token_data(corpus, kind, base_preset.vocab_size or 2048,
                                                           mcfg0.block_size)
    if checkpoint_as and task is None:
        checkpoint_as += run_suffix(corpus, tokenizer)

    def per_run(vname: str, seed: int) -> dict:
        keep = (checkpoint_as and seed == seeds[0] and not quick
                and (checkpoint_for is None or vname in checkpoint_for))
        return {"seed": seed, "variant": vname,
                "ablation": ablation is True or (ablation is not False and vname in ablation),
                "checkpoint_dir": models_dir(options) / checkpoint_as / vname if keep else None}

    runs, configs = run_variants(preset, variants, seeds, data, train_and_measure, overrides=overrides,
                                 options=options, desc=desc, jobs=jobs, per_run=per_run,
                                 metric_batches=metric_batches, final_eval=final_eval, x0_need=x0_need)
    reads = {v: c["train"]["steps"] * c["train"]["batch_size"] * data.block_size for v, c in configs.items()}
    tokens_per_step = {v: c["train"]["batch_size"] * data.block_size for v, c in configs.items()}
    if task is not None:
        return {"preset": preset, "task": task.name, "vocab_size": data.vocab_size, "configs": configs,
                "epochs_read": {v: None for v in configs}, "tokens_per_step": tokens_per_step, "runs": runs}
    return {"preset": preset, "corpus": "pydoc_data.topics" if corpus is None else corpus.name, "tokenizer": kind,
            "corpus_tokens": {"train": len(data.train), "val": len(data.val)},
            "vocab_size": data.vocab_size, "unigram_val_loss": unigram_loss(data),
            "epochs_read": {v: n / len(data.train) for v, n in reads.items()}, "tokens_per_step": tokens_per_step,
            "configs": configs, "runs": runs}


TRAIN_EVAL_BATCHES = 16   # the training-split batches a final evaluation reads (32,768 tokens at 32 × 64)


def train_and_measure(mcfg, tcfg, data, seed: int, metric_batches: int, ablation: bool, checkpoint_dir: Path | None,
                      variant: str, desc: str, progress: bool, options: RunOptions | None = None,
                      final_eval: bool = False, x0_need: bool = False) -> dict:
    """One run of :func:`compare_variants`: build ``TinyGPT(mcfg)``, train it on ``data`` with ``tcfg`` (and
    ``options``), measure it (``final_eval``, ``x0_need``: see :func:`compare_variants`)
    (module level, so that a worker process can run it; the trained model stays where it was trained, only the
    returned dict and the checkpoint in ``checkpoint_dir`` leave)."""
    model = TinyGPT(mcfg)
    hist = train(model, data, tcfg, progress=progress, desc=desc, options=options)
    batches = ([data.batch(tcfg.batch_size, torch.Generator().manual_seed(20_000 + seed))
                for _ in range(metric_batches)] if isinstance(data, SyntheticTask)
               else list(data.eval_batches("val", tcfg.batch_size, metric_batches)))
    run = {"seed": seed, "history": hist.to_dict(), "final_val_loss": hist.val_loss[-1],
           "final_val_acc": hist.val_acc[-1], "n_params": model.num_params(),
           "optimizer": optimizer_settings(make_optimizer(model, tcfg, tcfg.batch_size * data.block_size)),
           "layer_metrics": layer_metrics(model, batches), "coefficients": coefficient_readout(model)}
    if final_eval and not isinstance(data, SyntheticTask):
        run["curve_final_val_loss"] = hist.val_loss[-1]
        run["final_val_loss"], run["final_val_acc"] = evaluate(model, data, tcfg, None)
        run["final_train_loss"], _ = evaluate(model, data, tcfg, TRAIN_EVAL_BATCHES, split="train")
        n_val = ((len(data.val) - 1) // data.block_size) * data.block_size
        windows = min(TRAIN_EVAL_BATCHES * tcfg.batch_size, (len(data.train) - 1) // data.block_size)
        n_train = windows * data.block_size
        run["final_eval"] = {"val_tokens": n_val, "train_tokens": n_train}
    if x0_need and mcfg.x0_mode == "qkv":
        run["x0_removal_cost"] = x0_removal_cost(model, batches)
    if x0_need and mcfg.x0_mode == "none":
        run["x0_pressure"] = x0_gradient_pressure(model, batches)
    if ablation:
        run["ablation"] = substitution_ablation(model, batches)
    if checkpoint_dir is not None:
        save_checkpoint(checkpoint_dir, model, getattr(data, "tokenizer", None), {"train": tcfg.__dict__,
                                                                                   "variant": variant})
    return run
