"""Every full run a chapter's result file has held, read from git history, and the verdicts that changed between
consecutive runs: ``python -m vrs_edu.lab.ledger`` writes ``data/results/ledger.json`` (committed with the results).

A chapter shows the runs behind its numbers, failed designs included (review 2, finding 7: the recall rate was
chosen after a first design failed, and the chapter listed only part of the runs); a result file holds only the
latest. Git holds every version: for each version of each file this module records when and how it was made (the
command, the commit of the code, wall and CPU time, the machine's cores, the load), its design (steps, batch,
rate) and its stored verdicts, then lists, between each version and the next, the tests whose verdict changed
and whether the machine (its core count) or the code changed with it (review 2, finding 9: two chapter 03 verdicts
flipped between machines, unreported). Reading history needs git and the repository's history; the chapters read
the committed ledger, so they need neither.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from vrs_edu.i18n import evidence as E
from vrs_edu.i18n.language import resolve_language

ROOT = Path(__file__).resolve().parents[2]
# Every recipe's result files (the verdict corpus' files first): chapters 03-08 list their runs.
FILES = ("value-residual.corpus-kjv.json", "value-residual.json", "bank-of-values.corpus-kjv.json",
         "bank-of-values.json", "recall.json", "recall-rates.json", "recall-tuning.json",
         "depth-sweep.corpus-kjv.json", "depth-mixers.corpus-kjv.json", "depth-mixers.json",
         "v-over-depth.corpus-kjv.json", "real-decoder.json", "encoder-norms.json", "decoder-norms.json",
         "production-designs.corpus-kjv.json", "decoder-kv-designs.json")
LEDGER = ROOT / "data" / "results" / "ledger.json"


def _git(*args: str, root: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _design(result: dict) -> dict:
    """Steps, batch, rates and variants of a result's runs (its first part that has configs)."""
    part = next((v for v in result.values() if isinstance(v, dict) and "configs" in v), None)
    if part is None:
        return {}
    cfg = next(iter(part["configs"].values()))["train"]
    return {"variants": list(part["configs"]), "steps": cfg.get("steps"), "batch_size": cfg.get("batch_size"),
            "lr": cfg.get("lr"), "coef_opt": cfg.get("coef_opt"),
            "corpus": part.get("corpus") or part.get("task")}


def summary(result: dict, commit: str) -> dict:
    """What the ledger keeps of one stored version: provenance, design, and each stored verdict with its mean."""
    env = result.get("environment", {})
    return {"commit": commit, "date": result.get("date"), "command": result.get("command"),
            "code": result.get("git"), "wall_time_s": result.get("wall_time_s"),
            "cpu_time_s": result.get("cpu_time_s"), "jobs": env.get("jobs"), "threads": env.get("threads"),
            "cpu_count": env.get("cpu_count"), "load_average_1m": env.get("load_average_1m"),
            "seeds": result.get("seeds"), "design": _design(result),
            "rejudged": [{k: e[k] for k in ("date", "code", "reason")} for e in result.get("rejudged", [])],
            "verdicts": {v["name"]: {"verdict": v["verdict"], "mean": v["mean"]} for v in result.get("verdicts", [])}}


def _same_run(a: dict, b: dict) -> bool:
    """Two stored versions of one run, the same verdicts: the file was rewritten (a retired key removed), not made
    again nor judged again (``vrs-edu rejudge``: a version of its own, with its reason)."""
    return all(a[k] == b[k] for k in ("date", "command", "wall_time_s", "cpu_time_s", "seeds")) and \
        len(a.get("rejudged", [])) == len(b.get("rejudged", []))


def _subject(commit: str, root: Path = ROOT) -> str:
    """The first line of a commit's message ("" when git cannot tell)."""
    try:
        return _git("log", "-1", "--format=%s", commit, root=root).strip()
    except subprocess.CalledProcessError:
        return ""


def reason(a: dict, b: dict, root: Path = ROOT) -> str:
    """Why the verdicts of version ``b`` may differ from ``a``'s: a re-judgement's own reason (same runs, new rules);
    else what changed with the new run — the design's keys, the code's commit, the machine's cores — and the message
    of the commit that stored it."""
    if len(b.get("rejudged", [])) > len(a.get("rejudged", [])) and b["date"] == a["date"]:
        return "re-judged, same runs: " + "; ".join(e["reason"] for e in b["rejudged"][len(a.get("rejudged", [])):])
    parts = [f"{k} {a['design'].get(k)} → {b['design'].get(k)}" for k in dict.fromkeys([*a["design"], *b["design"]])
             if a["design"].get(k) != b["design"].get(k)]
    ca, cb = (a.get("code") or {}).get("commit"), (b.get("code") or {}).get("commit")
    if ca != cb:
        parts.append(f"code {(ca or '?')[:7]} → {(cb or '?')[:7]}")
    if a.get("cpu_count") != b.get("cpu_count"):
        parts.append(f"machine {a.get('cpu_count')} → {b.get('cpu_count')} cores")
    subject = _subject(b["commit"], root)
    return "new run" + (f" ({', '.join(parts)})" if parts else "") + (f": {subject}" if subject else "")


def versions(name: str, root: Path = ROOT) -> list[dict]:
    """Every committed version of ``data/results/<name>`` that is a run of its own, oldest first (``summary`` of
    each; a version with the same date, command, wall and CPU time and seeds as the one before it is that run's file
    rewritten, e.g. when the retired two-way ``summary`` key was removed, and is not listed again)."""
    path = f"data/results/{name}"
    commits = _git("log", "--format=%H", "--follow", "--", path, root=root).split()
    out = []
    for c in reversed(commits):
        try:
            text = _git("show", f"{c}:{path}", root=root)
        except subprocess.CalledProcessError:      # a rename's older name: --follow lists it, the path is absent
            continue
        entry = summary(json.loads(text), c)
        if not (out and _same_run(out[-1], entry)):
            out.append(entry)
    return out


def flips(entries: list[dict], root: Path = ROOT) -> list[dict]:
    """Between each version and the next: the tests whose verdict changed (a test declared in only one of them
    counts too, as "(not declared)"), what changed with them and why (:func:`reason`). ``[{"from", "to", "machine",
    "reason", "changed": [{"name", "before", "after", "mean_before", "mean_after"}]}]``, one entry per consecutive
    pair that has a change."""
    out = []
    for a, b in zip(entries, entries[1:]):
        va, vb = a["verdicts"], b["verdicts"]
        if not va:            # a version that stored no verdicts (the first runs of a recipe) has none to change
            continue
        changed = [{"name": n, "before": va.get(n, {}).get("verdict", "(not declared)"),
                    "after": vb.get(n, {}).get("verdict", "(not declared)"),
                    "mean_before": va.get(n, {}).get("mean"), "mean_after": vb.get(n, {}).get("mean")}
                   for n in dict.fromkeys([*va, *vb])
                   if va.get(n, {}).get("verdict") != vb.get(n, {}).get("verdict")]
        if changed:
            out.append({"from": a["commit"], "to": b["commit"], "machine": [a["cpu_count"], b["cpu_count"]],
                        "reason": reason(a, b, root), "changed": changed})
    return out


def build(root: Path = ROOT, files=FILES) -> dict:
    """``{file: {"runs": [summary, ...], "flips": [...]}}`` for every file in ``files`` that git knows."""
    out = {}
    for name in files:
        entries = versions(name, root)
        if entries:
            out[name] = {"runs": entries, "flips": flips(entries, root)}
    return out


def load(path: Path = LEDGER) -> dict:
    """The committed ledger. Raises FileNotFoundError naming the command that writes it."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} does not exist: run `python -m vrs_edu.lab.ledger`")
    return json.loads(Path(path).read_text())


def run_lines(ledger: dict, name: str, lang: str | None = None) -> list[str]:
    """Two lines per stored run of ``name`` (oldest first): date, commit, wall and CPU time, cores and load, design;
    then how many of its stored verdicts were of each kind. ``[]`` when the ledger has no such file. ``lang``: the
    edition (None: the running notebook's; :func:`vrs_edu.i18n.evidence.run_line`)."""
    lang, lines = resolve_language(lang), []
    for e in ledger.get(name, {}).get("runs", []):
        d = e["design"]
        counts: dict[str, int] = {}
        for v in e["verdicts"].values():
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
        lines.append(E.run_line((e["date"] or "?")[:10], e["commit"][:7], e.get("wall_time_s"), e.get("cpu_time_s"),
                                e.get("cpu_count"), e.get("load_average_1m"), d.get("steps"), d.get("lr"), lang))
        lines.append("    " + E.verdict_counts(counts, lang))
    return lines


def flip_lines(ledger: dict, name: str, lang: str | None = None, labelled: bool = False) -> list[str]:
    """The verdict changes between consecutive runs of ``name``, one line each, naming a change of machine, then the
    recorded reason (English data, marked as such in Korean). ``labelled``: each line starts with ``changed: ``
    (``변경: ``). ``lang``: the edition (None: the running notebook's)."""
    lang, lines = resolve_language(lang), []
    runs = {e["commit"]: e for e in ledger.get(name, {}).get("runs", [])}
    for f in ledger.get(name, {}).get("flips", []):
        for c in f["changed"]:   # the dates only where a verdict changed (a flip may name a run no longer kept)
            dates = f"{runs[f['from']]['date'][:10]} → {runs[f['to']]['date'][:10]}"
            means = " → ".join("—" if m is None else f"{m:+.3f}" for m in (c["mean_before"], c["mean_after"]))
            lines.append(E.flip_line(dates, f["machine"], c["name"], c["before"], c["after"], means, lang))
        if f.get("reason"):
            lines.append(E.why_line(f["reason"], lang))
    return [E.CHANGED[lang] + x for x in lines] if labelled else lines


if __name__ == "__main__":
    LEDGER.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {LEDGER}")
