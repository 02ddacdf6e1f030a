"""Premises shared by several chapters' recipes: each threshold declared once, with its reason, and imported by
every recipe that tests the premise (review 3, H3: one premise had 0.5 in chapter 04 and 0.9 in chapter 05, the
latter set after seeing the runs). Also the course's one "no worse" rule, and :class:`Description`: the interval of
a number that is shown but not judged, because the premise of the claim it would test is known to fail.

Thresholds here were not chosen from the runs they gate: ``DEEP_X0_R2`` is chapter 04's original 0.5 (declared
before its first full run, 8782857), ``NO_WORSE_MARGIN`` the 0.01 nats both chapter 04's and chapter 05's "no worse"
rules already declared.
"""
from __future__ import annotations

from dataclasses import dataclass

from vrs_edu.lab.analysis import t_test
from vrs_edu.lab.results import interval

# The premise of re-reading x0 (bank-of-values paper, arXiv 2606.02780, Sec. 1: deep layers have lost the token's
# identity, so an extra read of x0 has something to add). Quantity: the x0-R² of the deep layers' Q, K, V inputs in
# the trained baseline (:func:`vrs_edu.lab.metrics.x0_r2`, the share of their variance an affine map of the token's
# x0 explains), mean over the deep layers, paths and seeds. Threshold: "mostly context" = less than half of that
# variance is token identity. Above it every path already reads x0 through its input, W(x_i) ≈ A·W(x0) + b, so the
# split between the stream's coefficient and x0's is not identified and neither a share nor a removal cost says which
# path *needs* x0: the premise gates both directions.
DEEP_X0_R2 = 0.5
DEEP_X0_R2_REASON = ("the deep layers' inputs must be mostly context (x0-R² below one half), else every path reads x0 "
                     "through its input already and neither a share nor a removal cost can say which path needs it")
# Why the language-model toys do not test the x0 claims (their deep inputs: 0.83-0.88 x0-R² at every depth 4-24,
# review 3, H3; 0.93-0.95 with chapter 05's mixers): said once, for every recipe's docstring and description.
LM_TOYS_FAIL = ("the language-model toys' deep inputs are 0.83-0.88 token identity (x0-R²) at every depth from 4 to "
                f"24, above the premise's {DEEP_X0_R2:g}, so no setting of them can test which path needs x0: these "
                "numbers are descriptions, and the claims are judged on the recall task, where the premise holds")
# The same, short: the reason a description prints.
LM_TOYS_SHORT = (f"not judged: its premise, deep inputs mostly context (x0-R² < {DEEP_X0_R2:g}), fails on every "
                 "language-model toy")

# The course's one "no worse" rule (review 3, H3: a mean against 0.01 in chapter 04, an underpowered one-sided t in
# chapter 05): a model "no worse than the baseline" is a declared check, an equivalence test (two one-sided tests) of
# its final val loss − the baseline's (paired by seed) within ± this margin. 0.01 nats is the smallest loss effect
# the chapters' loss claims declare (chapter 05's MIXER_GAIN: a third of the value residual's published gain).
NO_WORSE_MARGIN = 0.01
NO_WORSE_SOURCE = ("declared: ±0.01 nats, the course's one 'no worse' margin (vrs_edu.lab.premises), the smallest "
                   "loss effect its loss claims declare")


@dataclass(frozen=True)
class Description:
    """A number shown with its 95 % interval but not judged (no p, no verdict): the premise of the claim it would
    test is known to fail where it was measured (``why``). ``values``: per seed (or ``{arm: per seed}`` for a rate
    sweep, then ``arms`` holds one Description per arm and the numbers are the first arm's)."""

    name: str
    quantity: str
    why: str
    values: list
    n: int
    mean: float
    sd: float
    ci: tuple[float, float]
    arms: tuple | None = None

    def interval(self, digits: int = 3, label: str = "") -> str:
        """``+0.012 [-0.004, +0.028]``, as :meth:`vrs_edu.lab.results.Verdict.interval`."""
        return interval(self.mean, self.ci, digits, label)

    def __str__(self) -> str:
        if self.arms is not None:
            return "description across the arms (" + "; ".join(f"{a} {d.interval()}" for a, d in self.arms) + \
                f"): {self.why}"
        return f"{self.interval(3, '95% CI ')}: description ({self.why})"


def describe(name: str, quantity: str, values, why: str = LM_TOYS_SHORT) -> Description:
    """The :class:`Description` of per-seed ``values`` (a list, or ``{arm: list}`` with the nominal arm first):
    mean, sd and the Student-t 95 % interval of :func:`vrs_edu.lab.analysis.t_test`.

    Raises:
        ValueError: empty ``values`` (from :func:`~vrs_edu.lab.analysis.t_test`).
    """
    if isinstance(values, dict):
        arms = tuple((a, describe(name, quantity, v, why)) for a, v in values.items())
        first = arms[0][1]
        return Description(name, quantity, why, {a: d.values for a, d in arms}, first.n, first.mean, first.sd,
                           first.ci, arms)
    r = t_test(values)
    ci = tuple(float(c) for c in r["ci"])
    return Description(name, quantity, why, r["values"], r["n"], r["mean"], r["sd"], ci)


def description_records(rows) -> list[dict]:
    """Descriptions as JSON-ready dicts (``name``, ``quantity``, ``why``, ``n``, ``mean``, ``sd``, ``ci``, ``values``
    and per-arm ``arms``), NaN kept as NaN."""
    def rec(d: Description) -> dict:
        out = {"name": d.name, "quantity": d.quantity, "why": d.why, "n": d.n, "mean": d.mean, "sd": d.sd,
               "ci": list(d.ci), "values": d.values}
        if d.arms is not None:
            out["arms"] = [{"arm": a, **rec(x)} for a, x in d.arms]
        return out
    return [rec(d) for d in rows]


def deep_layers(n_layers: int) -> list[int]:
    return list(range(n_layers - n_layers // 3, n_layers))


def deep_x0_r2(runs: list[dict], stream: str = "v") -> float:
    """Mean over seeds and the last third of the layers of a variant's x0-R² of ``stream``'s input (NaN without
    ``x0_r2``)."""
    vals = [sum(x["x0_r2"][stream][l] for l in deep_layers(len(x["x0_r2"][stream]))) / len(deep_layers(
            len(x["x0_r2"][stream]))) for x in runs if "x0_r2" in x]
    return sum(vals) / len(vals) if vals else float("nan")
