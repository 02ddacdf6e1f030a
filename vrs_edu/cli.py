"""The ``vrs-edu`` command: train a model, reproduce a chapter's long runs, build and grade assignments.

    vrs-edu train --preset char-6x64 --steps 300 --out runs/char
    vrs-edu reproduce value-residual [--quick]
    vrs-edu info
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace


def cmd_train(args) -> int:
    from .lab.data import load_corpus, make_token_data, unigram_loss
    from .lab.presets import make_run
    from .lab.train import save_checkpoint, train
    from .nn.model import TinyGPT

    over = {k: v for k, v in (("steps", args.steps), ("seed", args.seed)) if v is not None}
    preset, mcfg, tcfg = make_run(args.preset, **over)
    text = load_corpus(args.corpus)
    data = make_token_data(text, args.tokenizer or preset.tokenizer, preset.vocab_size or 2048, mcfg.block_size)
    mcfg = replace(mcfg, vocab_size=data.vocab_size)
    model = TinyGPT(mcfg)
    print(f"preset {args.preset}: {model.num_params():,} parameters, {len(data.train):,} training tokens "
          f"({data.tokenizer.kind} tokenizer, vocab {data.vocab_size})")
    hist = train(model, data, tcfg)
    uni = unigram_loss(data)
    print(f"{tcfg.steps} steps in {hist.wall_time_s:.1f} s; validation loss {hist.val_loss[-1]:.3f} nats "
          f"(unigram baseline {uni:.3f})")
    if args.out:
        path = save_checkpoint(args.out, model, data.tokenizer,
                               {"train": tcfg.__dict__, "history": hist.to_dict(), "unigram_val_loss": uni,
                                "corpus": args.corpus or "pydoc_data.topics"})
        print(f"checkpoint written to {path}")
    return 0


def cmd_reproduce(args) -> int:
    from .lab.experiments import RECIPES, _load_recipes, run_recipe

    _load_recipes()
    if args.name == "list" or args.name is None:
        for r in RECIPES.values():
            print(f"{r.name:20s} {r.about}")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
    path = run_recipe(args.name, quick=args.quick, seeds=seeds, out_dir=args.out)
    result = json.loads(path.read_text())
    print(f"wrote {path} ({result['wall_time_s']} s)")
    return 0


def cmd_info(args) -> int:
    from .lab.experiments import environment_info
    from .lab.presets import PRESETS

    print(json.dumps(environment_info(), indent=1))
    for p in PRESETS.values():
        print(f"preset {p.name:12s} {p.about}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="vrs-edu", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a TinyGPT on a corpus and save a checkpoint")
    t.add_argument("--corpus", help="UTF-8 text file (default: the Python reference docs, pydoc_data.topics)")
    t.add_argument("--preset", default="char-6x64", help="model/training size (see `vrs-edu info`)")
    t.add_argument("--tokenizer", choices=("char", "word", "bpe"), help="override the preset's tokenizer")
    t.add_argument("--steps", type=int)
    t.add_argument("--seed", type=int)
    t.add_argument("--out", help="checkpoint folder (model.safetensors, config.json, tokenizer.json)")
    t.set_defaults(fn=cmd_train)
    r = sub.add_parser("reproduce", help="run a chapter's long experiment and write data/results/NAME.json")
    r.add_argument("name", nargs="?", help="recipe name, or `list`")
    r.add_argument("--quick", action="store_true", help="a small run of the same code (about a minute)")
    r.add_argument("--seeds", help="comma-separated seeds (default: the recipe's, at least 3)")
    r.add_argument("--out", help="results folder (default: data/results)")
    r.set_defaults(fn=cmd_reproduce)
    i = sub.add_parser("info", help="versions, threads and presets")
    i.set_defaults(fn=cmd_info)
    for extra in EXTRA_COMMANDS:
        extra(sub)
    return ap


# Other modules add sub-commands here: a function that takes the sub-parsers object.
EXTRA_COMMANDS: list = []


def main(argv: list[str] | None = None) -> int:
    _load_extra_commands()
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"vrs-edu: error: {e}", file=sys.stderr)
        return 2


def _load_extra_commands() -> None:
    import importlib

    for mod in ("vrs_edu.course.assignments",):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


if __name__ == "__main__":
    sys.exit(main())
