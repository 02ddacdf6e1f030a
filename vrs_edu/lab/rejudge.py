"""``vrs-edu rejudge FILE … --reason "…"``: judge a stored result again with today's declarations, keeping what it said.

A result file stores the verdicts of the code that made it. When the *rules* change — a verdict word is added, a
claim's smallest effect is declared, a check is re-declared as an equivalence test — and the data do not, the runs
need not be made again: every recipe's ``verdicts(result)`` judges the stored per-seed values with the current
declarations (the chapters call it live). This command writes those verdicts into the file, so that the file and
the chapters agree, and appends to the file's ``rejudged`` list what it replaced, when, by which code and why::

    {"date", "code": {"commit", "dirty"}, "reason", "before": {test: verdict}, "after": {test: verdict}}

The ledger (:mod:`vrs_edu.lab.ledger`) lists a re-judged version beside the runs, with that reason for every verdict
that changed. Nothing else in the file changes; no model is trained or evaluated.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from vrs_edu.lab.analysis import verdict_records
from vrs_edu.lab.experiments import git_state
from vrs_edu.lab.results import to_json


def rejudge(result: dict, reason: str, judges: dict, code: dict | None = None, date: str | None = None) -> dict:
    """``result`` with its ``verdicts`` replaced by today's and a ``rejudged`` entry appended (see the module's
    docstring). ``judges``: recipe name -> its ``verdicts(result)`` (:data:`vrs_edu.recipes.JUDGES`). The input is
    not modified.

    Raises:
        ValueError: an empty ``reason``; a result of no known recipe, or with no stored verdicts to replace.
    """
    if not reason or not reason.strip():
        raise ValueError("reason must say why the result is judged again (the rule that changed), got ''")
    name = result.get("recipe")
    if name not in judges:
        raise ValueError(f"result's recipe must be one of {sorted(judges)}, got {name!r}")
    if not result.get("verdicts"):
        raise ValueError(f"the {name} result holds no stored verdicts to judge again")
    new = verdict_records(judges[name](result))
    entry = {"date": date or datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "code": code if code is not None else git_state(), "reason": reason.strip(),
             "before": {v["name"]: v["verdict"] for v in result["verdicts"]},
             "after": {v["name"]: v["verdict"] for v in new}}
    return {**result, "verdicts": new, "rejudged": [*result.get("rejudged", []), entry]}


def rejudge_file(path: str | Path, reason: str, judges: dict) -> dict:
    """Re-judge the result file at ``path`` in place (:func:`rejudge`); returns its new ``rejudged`` entry.
    Raises FileNotFoundError for a missing file, ValueError as :func:`rejudge`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"result file {path} does not exist")
    out = rejudge(json.loads(path.read_text()), reason, judges)
    path.write_text(json.dumps(out, indent=1, default=to_json) + "\n")
    return out["rejudged"][-1]


def changed_lines(entry: dict) -> list[str]:
    """``test: before → after`` for every verdict a ``rejudged`` entry changed (added and dropped tests too)."""
    before, after = entry["before"], entry["after"]
    return [f"{n}: {before.get(n, '(not declared)')} → {after.get(n, '(no longer declared)')}"
            for n in dict.fromkeys([*before, *after]) if before.get(n) != after.get(n)]
