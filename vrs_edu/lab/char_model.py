"""Recipe ``char-6x64``: the trained character model that chapters 01 and 02 take apart.

Chapters 01 and 02 measure a *trained* TinyGPT (attention patterns, logit lens, pattern swaps). The 300-step live
run of the ``char-6x64`` preset takes about a minute single-threaded and its heads are only half formed, so this
recipe trains the same preset longer, once, and saves a small safetensors checkpoint (about 1.3 MB) that the
chapters load in a fraction of a second:

    vrs-edu reproduce char-6x64            # ~2000 steps, a few minutes on 2 cores
    vrs-edu reproduce char-6x64 --quick    # 60 steps, for tests; its checkpoint goes to char-6x64.quick/

The result file ``data/results/char-6x64.json`` holds the loss history, the unigram baseline, both configs, the
checkpoint's path and (added by the runner) the command, versions and wall time, which the chapters print.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vrs_edu.lab import experiments
from vrs_edu.lab.corpora import corpus_token_data, run_suffix
from vrs_edu.lab.data import unigram_loss
from vrs_edu.lab.experiments import Recipe, chosen_corpus, load_results
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.presets import scaled_run
from vrs_edu.lab.train import evaluate, load_checkpoint, save_checkpoint, train
from vrs_edu.nn.model import TinyGPT

NAME = "char-6x64"
FULL_STEPS = 2000


def checkpoint_dir(quick: bool = False, suffix: str = "", options: RunOptions | None = None) -> Path:
    """Where the recipe writes (and the chapters read) the checkpoint; ``suffix`` (``.corpus-<name>``, from
    :func:`~vrs_edu.lab.corpora.run_suffix`) keeps a run on another corpus apart from the chapters' model;
    ``options.models_dir`` (``reproduce --out``) sends it elsewhere (:func:`~vrs_edu.lab.experiments.models_dir`)."""
    return experiments.models_dir(options) / (NAME + suffix + (".quick" if quick else ""))


def run(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
        options: RunOptions = RunOptions()) -> dict:
    if len(seeds) != 1:
        raise ValueError(f"recipe {NAME} trains one model: give exactly one seed, got {seeds}")
    steps = 60 if quick else FULL_STEPS
    preset, mcfg, tcfg = scaled_run(NAME, options, steps=steps, warmup=min(50, steps // 4),
                                    eval_every=max(20, steps // 8), eval_batches=None, seed=seeds[0])
    kind = tokenizer or preset.tokenizer  # corpus / tokenizer: None = the default corpus / the preset's
    data = corpus_token_data(corpus, kind, preset.vocab_size or 2048, mcfg.block_size)
    model = TinyGPT(replace(mcfg, vocab_size=data.vocab_size, seed=seeds[0]))
    hist = train(model, data, tcfg, progress=not quick, desc=NAME, options=options)
    val_loss, val_acc = evaluate(model, data, tcfg, max_batches=None)
    path = save_checkpoint(checkpoint_dir(quick, run_suffix(corpus, tokenizer), options), model, data.tokenizer,
                           {"train": tcfg.__dict__})
    root = experiments.CHECKPOINT_DIR.parent.parent
    return {"preset": NAME, "corpus": "pydoc_data.topics" if corpus is None else corpus.name, "tokenizer": kind,
            "corpus_tokens": {"train": len(data.train), "val": len(data.val)},
            "vocab_size": data.vocab_size, "n_params": model.num_params(),
            "unigram_val_loss": unigram_loss(data), "final_val_loss": val_loss, "final_val_acc": val_acc,
            "train_wall_time_s": hist.wall_time_s,
            "history": {k: getattr(hist, k) for k in ("eval_steps", "val_loss", "val_acc")},
            "configs": {"model": model.cfg.to_dict(), "train": tcfg.__dict__},
            "checkpoint": str(path.relative_to(root)) if path.is_relative_to(root) else str(path)}


def load_char_model(quick: bool = False):
    """The checkpoint and result file of this recipe: ``(model, tokenizer, results dict)``.

    Raises:
        FileNotFoundError: the checkpoint or the result file is missing; the message names the command that makes
            them (``vrs-edu reproduce char-6x64``).
    """
    path = checkpoint_dir(quick, run_suffix(chosen_corpus()))  # VRS_EDU_CORPUS: the model of a teacher's corpus
    cmd = f"vrs-edu reproduce {NAME}" + (" --quick" if quick else "")
    if not (path / "model.safetensors").exists():
        raise FileNotFoundError(f"no checkpoint at {path}: run `{cmd}` (a few minutes on 2 cores)")
    model, tokenizer, _ = load_checkpoint(path)
    return model, tokenizer, load_results(NAME, quick)


# `vrs-edu reproduce char-6x64` (the table of every recipe: vrs_edu.recipes)
RECIPE = Recipe(NAME, run,
                "6-layer character model trained longer than the live preset; chapters 01-02 load it",
                default_seeds=(0,), text=True)
