"""The ``vrs-edu`` command: train a model, reproduce a chapter's long runs, build and grade assignments.

    vrs-edu train --preset char-6x64 --steps 300 --out runs/char
    vrs-edu reproduce value-residual [--quick] [--corpus kjv|FILE] [--tokenizer char|word|bpe]
    vrs-edu corpora
    vrs-edu info

Scaling up (README, "Scaling up"): ``--device auto|cpu|cuda|mps``, ``--compile``, ``--checkpoint-every N`` and
``--resume`` on ``train`` and ``reproduce``; several processes with ``torchrun --nproc-per-node N -m vrs_edu.cli ...``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from vrs_edu.cli_args import (UsageError, corpus as corpus_arg, device_name, natural_int, one_of, output_dir,
                              parse_setting, positive_int, seed_list, setting, text_file)
from vrs_edu.course.assignments.cli import add_commands as add_assignment_commands
from vrs_edu.lab import corpora, device as device_of, distributed
from vrs_edu.lab.data import load_corpus, make_token_data, unigram_loss
from vrs_edu.lab.experiments import RESULTS_DIR, environment_info, run_recipe
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.parallel import default_jobs
from vrs_edu.lab.presets import PRESETS, make_run
from vrs_edu.lab.rejudge import changed_lines, rejudge_file
from vrs_edu.lab.train import save_checkpoint, train
from vrs_edu.nn.model import TinyGPT
from vrs_edu.recipes import JUDGES, RECIPES, recipe_named


@contextlib.contextmanager
def _scaled(args, checkpoint_root: str | None = None, **more):
    """Resolve ``--device`` and join the torchrun process group (if launched by torchrun). Yields the
    :class:`~vrs_edu.lab.distributed.World` and the :class:`~vrs_edu.lab.options.RunOptions` that the command
    passes to every ``train`` call (from the flags, plus ``more``); leaves the group at the end."""
    device = device_of.resolve_device(args.device)
    world = distributed.init_from_env(device)
    args.resolved_device = device_of.describe(device, device_of.autocast_dtype(device, args.precision))
    try:
        if world.is_main:
            print(f"device: {args.resolved_device}"
                  + (f"; {world.size} processes (DDP, {distributed.backend_for(device)})" if world.size > 1 else ""))
        yield world, RunOptions(device=device, precision=args.precision, compile=args.compile,
                                checkpoint_root=checkpoint_root, checkpoint_every=args.checkpoint_every,
                                resume=args.resume, progress=not args.quiet, **more)
    except BaseException:
        distributed.shutdown(wait=False)
        raise
    distributed.shutdown()


def _parse_settings(items: list[str] | None) -> dict:
    """``["value_residual=resformer", "x0_layers=[8,9,10,11]"]`` -> a dict of preset overrides, each item read by
    :func:`~vrs_edu.cli_args.parse_setting` (the same reading that validated it as an argument: JSON values, else
    strings; lists become tuples)."""
    return dict(parse_setting(item) for item in items or [])


def _add_scale_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", type=device_name,
                   help="auto (CUDA if present, else CPU) | cpu | cuda | cuda:N | mps")
    p.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                   help="auto = bf16 autocast on CUDA, fp32 elsewhere")
    p.add_argument("--compile", action="store_true", help="run the model through torch.compile (off by default)")
    p.add_argument("--checkpoint-dir", type=output_dir,
                   help="folder for the training state (weights, optimizer, data order)")
    p.add_argument("--checkpoint-every", type=positive_int,
                   help="write the training state every N steps and at the end")
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --checkpoint-dir")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="draw no progress bars (as the environment variable TQDM_DISABLE=1 does)")


def cmd_train(args) -> int:
    over = {k: v for k, v in (("steps", args.steps), ("seed", args.seed), ("batch_size", args.batch_size))
            if v is not None}
    preset, mcfg, tcfg = make_run(args.preset, **{**_parse_settings(args.set), **over})  # explicit flags win
    ckpt = args.checkpoint_dir or (str(Path(args.out) / "training-state") if args.out else None)
    if (args.resume or args.checkpoint_every) and ckpt is None:
        raise ValueError("--resume and --checkpoint-every need --checkpoint-dir (or --out)")
    with _scaled(args) as (world, options):
        say = print if world.is_main else (lambda *a, **k: None)
        if getattr(args, "force", False) and world.is_main:
            _replace_runs(args.out, args.checkpoint_dir)
        text = load_corpus(args.corpus)
        data = make_token_data(text, args.tokenizer or preset.tokenizer, preset.vocab_size or 2048,
                               mcfg.block_size)
        mcfg = replace(mcfg, vocab_size=data.vocab_size)
        model = TinyGPT(mcfg)
        say(f"preset {args.preset}: {model.num_params():,} parameters, {len(data.train):,} training tokens "
            f"({data.tokenizer.kind} tokenizer, vocab {data.vocab_size})")
        hist = train(model, data, tcfg, checkpoint_dir=ckpt, options=options)
        uni = unigram_loss(data)
        say(f"{tcfg.steps} steps in {hist.wall_time_s:.1f} s; validation loss {hist.val_loss[-1]:.3f} nats "
            f"(unigram baseline {uni:.3f})")
        if args.out:
            path = save_checkpoint(args.out, model, data.tokenizer,
                                   {"train": tcfg.__dict__, "history": hist.to_dict(), "unigram_val_loss": uni,
                                    "corpus": args.corpus or "pydoc_data.topics", "processes": world.size})
            say(f"checkpoint written to {path}")
    return 0


def _replace_runs(*folders: str | None) -> None:
    """``train --force``: say what each folder's earlier run holds, then delete exactly that (see :func:`_holds_run`;
    anything else in the folder stays)."""
    for folder in dict.fromkeys(f for f in folders if f):
        held = _holds_run(folder)
        if not held:
            continue
        print(f"--force: replacing the run in {folder}: {', '.join(held)}")
        for rel in held:
            path = Path(folder) / rel
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        for extra in ("training-state/latest", "latest"):
            (Path(folder) / extra).unlink(missing_ok=True)


def _result_flags(args) -> list[str]:
    """The ``reproduce`` flags given on the command line that change the numbers a recipe writes, as arguments."""
    pairs = [("--seeds", args.seeds), ("--preset", args.preset)] + [("--set", item) for item in args.set or []]
    pairs += [("--device", None if args.device == "auto" else args.device),
              ("--precision", None if args.precision == "auto" else args.precision)]
    return [a for flag, value in pairs if value for a in (flag, value)] + (["--compile"] if args.compile else [])


def cmd_reproduce(args) -> int:
    if args.name == "list" or args.name is None:
        for r in RECIPES.values():
            print(f"{r.name:20s} {r.about}")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
    root = None
    run_name = f"{args.name}{'.quick' if args.quick else ''}"
    if args.checkpoint_every or args.resume:  # one folder per training run inside (see train.run_key)
        # A run sent elsewhere with --out writes nothing into the repository (nor into the working folder)
        root = args.checkpoint_dir or str(Path(args.out) / "training-state" / run_name if args.out
                                          else Path("runs") / "resume" / run_name)
    # The trained models a recipe keeps: with --out DIR, under --checkpoint-dir or DIR/checkpoints; else in
    # data/checkpoints beside the results in data/results, where the chapters read both
    models = (args.checkpoint_dir or str(Path(args.out) / "checkpoints")) if args.out else None

    jobs = default_jobs() if args.jobs is None else args.jobs   # independent runs side by side, one thread each
    recipe = recipe_named(args.name)
    # The recorded command must make the same numbers again: the flags that change them go with it. Where the files
    # went (--out, --checkpoint-*) does not change a number, so it is left out.
    flags = _result_flags(args)
    # --preset and --set replace the recipe's own preset and apply last in every run (presets.scaled_run)
    with _scaled(args, checkpoint_root=root, jobs=jobs, preset=args.preset, models_dir=models,
                 settings=_parse_settings(args.set)) as (world, options):
        # Where and how it ran belongs to the result (run_recipe records the versions and threads).
        scale = {"device": args.resolved_device, "compile": args.compile, "processes": world.size,
                 "resumed": args.resume, "preset": args.preset, "settings": _parse_settings(args.set)}
        run = dict(quick=args.quick, seeds=seeds, corpus=args.corpus, tokenizer=args.tokenizer, options=options,
                   command_flags=flags, extra={"scale": scale})
        if not world.is_main:  # every rank runs the recipe (DDP needs them all); only rank 0's file is kept
            with tempfile.TemporaryDirectory() as scratch:
                run_recipe(recipe, out_dir=scratch, **run)
            return 0
        path = run_recipe(recipe, out_dir=args.out, **run)
    result = json.loads(path.read_text())
    print(f"wrote {path} ({result['wall_time_s']} s)")
    stem = result.get("text_corpus", {}).get("name")
    if args.corpus is not None and stem:
        shown = not args.quick and (args.out is None or Path(args.out).resolve() == RESULTS_DIR.resolve())
        print(f"to show the chapters this corpus: VRS_EDU_CORPUS={stem} make lab" if shown else
              "the chapters read full runs from data/results/ only: rerun without --quick"
              + (" and --out" if args.out is not None else "") + " to show them this corpus")
    return 0


def cmd_info(args) -> int:
    print(json.dumps(environment_info(), indent=1))
    for p in PRESETS.values():
        print(f"preset {p.name:12s} {p.about}")
    return 0


def cmd_corpora(args) -> int:
    print(corpora.describe())
    return 0


def cmd_rejudge(args) -> int:
    for path in args.files:
        entry = rejudge_file(path, args.reason, JUDGES)
        lines = changed_lines(entry)
        print(f"{path}: {len(lines)} verdict{'s' if len(lines) != 1 else ''} changed")
        for line in lines:
            print(f"  {line}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="vrs-edu", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a TinyGPT on a corpus and save a checkpoint")
    t.add_argument("--corpus", type=text_file,
                   help="UTF-8 text file (default: the Python reference docs, pydoc_data.topics)")
    t.add_argument("--preset", default="char-6x64", type=one_of(_preset_names, "preset"),
                   help="model/training size (see `vrs-edu info`)")
    t.add_argument("--tokenizer", choices=("char", "word", "bpe"), help="override the preset's tokenizer")
    t.add_argument("--steps", type=positive_int)
    t.add_argument("--seed", type=natural_int)
    t.add_argument("--batch-size", type=positive_int, help="global batch (split over torchrun processes)")
    t.add_argument("--set", action="append", metavar="KEY=VALUE", type=setting,
                   help="override any model or training setting, e.g. --set value_residual=resformer (repeatable)")
    t.add_argument("--out", type=output_dir, help="checkpoint folder (model.safetensors, config.json, tokenizer.json); "
                   "a folder that holds a run needs --resume (continue it) or --force (replace it)")
    t.add_argument("--force", action="store_true",
                   help="replace the run that --out (or --checkpoint-dir) holds: its weights and training state are "
                        "deleted, after saying which")
    _add_scale_flags(t)
    t.set_defaults(fn=cmd_train, validate=check_train, parser=t)
    r = sub.add_parser("reproduce", help="run a chapter's long experiment and write data/results/NAME.json")
    r.add_argument("name", nargs="?", type=one_of(_recipe_names, "recipe"), help="recipe name, or `list`")
    r.add_argument("--quick", action="store_true", help="a small run of the same code (about a minute)")
    r.add_argument("--seeds", type=seed_list,
                   help="comma-separated distinct seeds (default: the recipe's, at least 3)")
    r.add_argument("--preset", type=one_of(_preset_names, "preset"),
                   help="run the recipe's variants at another size (e.g. paper-12x768; see `vrs-edu info`)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", type=setting,
                   help="override a model or training setting in every run of the recipe, e.g. --set steps=20000")
    r.add_argument("--out", type=output_dir,
                   help="results folder (default: data/results); with --out nothing is written into the repository: "
                        "the recipe's models go to OUT/checkpoints (or --checkpoint-dir), its training state to "
                        "OUT/training-state")
    r.add_argument("--jobs", type=positive_int, metavar="N",
                   help="train the recipe's independent runs (variants x seeds) on N cores: N worker processes, "
                        "one torch thread each (a few more when the runs do not split evenly over N, so that no "
                        "core waits at the end); same numbers as one after another (default: the number of CPU "
                        "cores)")
    r.add_argument("--corpus", type=corpus_arg,
                   help="train the recipe's text runs on a named corpus (kjv, python-docs) or a UTF-8 text file; "
                        "writes NAME.corpus-<name>.json beside the default results")
    r.add_argument("--tokenizer", choices=("char", "word", "bpe"), help="override the recipe's tokenizer")
    _add_scale_flags(r)
    r.set_defaults(fn=cmd_reproduce, validate=check_reproduce, parser=r)
    i = sub.add_parser("info", help="versions, threads and presets")
    i.set_defaults(fn=cmd_info)
    c = sub.add_parser("corpora", help="the named corpora: size, licence, word tokens, [UNK] share (2,048 words)")
    c.set_defaults(fn=cmd_corpora)
    j = sub.add_parser("rejudge", help="judge stored result files again with today's declarations (no model is run); "
                                       "the file keeps what it replaced, and why, under 'rejudged'")
    j.add_argument("files", nargs="+", help="result files, e.g. data/results/recall.json")
    j.add_argument("--reason", required=True, help="why: the rule or declaration that changed")
    j.set_defaults(fn=cmd_rejudge)
    add_assignment_commands(sub)
    return ap


def _preset_names() -> list[str]:
    return sorted(PRESETS)


def _recipe_names() -> list[str]:
    return ["list", *RECIPES]


def _why(error: ValueError, preset: str, overrides: dict) -> str:
    """make_run's message without the ``preset 'x' with {...}: `` it starts with (the caller names both)."""
    return str(error).removeprefix(f"preset {preset!r} with {overrides}: ")


def check_settings(preset: str | None, items: list[str] | None, flags: dict[str, tuple[str, object]] | None = None,
                   preset_flag: str = "--preset") -> None:
    """Refuse settings that cannot run, naming the one the user typed: ``argument --set: 'steps=-5': preset
    'char-6x64': steps must be >= 1, got -5``. A setting wrong by itself is named alone; settings that are only
    wrong together (``d_model=30`` with ``n_heads=4``) are named together, with ``flags`` (the explicit flags that
    override settings, ``{key: (as typed, value)}``, e.g. ``{"steps": ("--steps 5", 5)}``).

    ``preset`` None (``reproduce`` without ``--preset``: each recipe picks its own): a setting is refused here only
    when it is wrong for every preset (``steps=-5``); one that depends on the preset is left to the recipe.
    """
    items, flags = list(items or []), dict(flags or {})
    for item in items:
        key, value = parse_setting(item)
        presets = [preset] if preset else sorted(PRESETS)
        reasons = []
        for name in presets:
            try:
                make_run(name, **{key: value})
                break
            except ValueError as e:
                reasons.append(_why(e, name, {key: value}))
        else:
            where = f"preset {preset!r}: " if preset else ""
            raise UsageError(f"argument --set: {item!r}: {where}{reasons[0]}")
    if preset is None:
        return
    together = {**_parse_settings(items), **{k: v for k, (_, v) in flags.items()}}
    try:
        make_run(preset, **together)
    except ValueError as e:
        typed = items + [t for t, _ in flags.values()]
        raise UsageError(f"argument {preset_flag}/--set: preset {preset!r} with {', '.join(typed)}: "
                         f"{_why(e, preset, together)}") from None


def _holds_run(folder: str | None) -> list[str]:
    """What in ``folder`` belongs to an earlier run of ``vrs-edu train`` (weights, config, tokenizer, training
    state), as paths relative to it; [] when nothing does."""
    if not folder or not Path(folder).is_dir():
        return []
    root = Path(folder)
    found = [f for f in RUN_FILES if (root / f).exists()]
    for state in (root, root / "training-state"):
        found += [str(p.relative_to(root)) for p in sorted(state.glob("step-*")) if p.is_dir()]
    return found


RUN_FILES = ("model.safetensors", "config.json", "tokenizer.json")


def check_train(args) -> None:
    """What no single flag can check: the flags together (before any data is read or a model built)."""
    if (args.resume or args.checkpoint_every) and not (args.checkpoint_dir or args.out):
        raise UsageError("--resume and --checkpoint-every need --checkpoint-dir (or --out)")
    if args.resume and args.force:
        raise UsageError("argument --force: replaces the run, --resume continues it; expected one of them, got both")
    flags = {k: (f"--{k.replace('_', '-')} {v}", v) for k, v in (("steps", args.steps), ("seed", args.seed),
                                                                  ("batch_size", args.batch_size)) if v is not None}
    check_settings(args.preset, args.set, flags)
    if not (args.resume or args.force):  # a finished (or interrupted) run is never replaced without being asked
        for flag, folder in (("--out", args.out), ("--checkpoint-dir", args.checkpoint_dir)):
            held = _holds_run(folder)
            if held:
                shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
                raise UsageError(f"argument {flag}: {folder!r} holds a run ({shown}); expected --resume to continue "
                                 "it or --force to replace it, or another folder")


def check_reproduce(args) -> None:
    # The recipe's own variants are applied later; this checks the settings (with --preset, on that preset).
    check_settings(args.preset, args.set)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and validate the command line; a bad argument exits with status 2 and one line naming it."""
    args = build_parser().parse_args(argv)
    validate = getattr(args, "validate", None)   # a command's checks of its flags together
    if validate is not None:
        try:
            validate(args)
        except UsageError as e:
            args.parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"vrs-edu: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
