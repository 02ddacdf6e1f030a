"""Typed results of :mod:`vrs_edu.lab.analysis`: what its comparisons return, how each prints and how it is stored.

* :class:`PairedDiff` — per-seed ``variant − baseline`` differences and their Student-t summary
  (:func:`~vrs_edu.lab.analysis.paired_difference`); prints as ``+0.006 [-0.020, +0.032], 2/5 seeds below 0``.
* :class:`DeclaredTest` — one test declared before the run (the claim, the per-seed quantity, the side of a
  threshold the claim predicts, the family it is Holm-corrected in).
* :class:`Verdict` — one declared test judged (:func:`~vrs_edu.lab.analysis.judge`): the test and its numbers;
  prints as the sentence the chapters show, ``-0.002 [95% CI -0.018, +0.014], p (Holm) 0.749: undecided (power 93%
  at -0.027)``; :meth:`Verdict.to_record` is what a recipe stores under ``result["verdicts"]``.
* :class:`Comparison` — one variant against the baseline (:func:`~vrs_edu.lab.analysis.compare_to_baseline`).

Every result is saved as JSON with the keys the plain dicts had before (``to_dict``/``to_record``) and rebuilt from
it (``from_dict``/``from_record``), so files written before and after read the same. During the move from dicts,
``obj["field"]`` reads ``obj.field`` and ``"field" in obj`` says whether the dict would have had that key, so code
written for the dicts keeps working; new code reads attributes.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

NAN = float("nan")


def signed(x: float | None, digits: int = 3) -> str:
    """``x`` with its sign and ``digits`` decimals (``+0.012``); ``n/a`` for None or NaN."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.{digits}f}"


def interval(mean: float, ci: tuple[float, float], digits: int = 3, label: str = "") -> str:
    """``+0.012 [-0.004, +0.028]``: a mean and its interval, signed; ``label="95% CI "`` names the interval
    (``+0.012 [95% CI -0.004, +0.028]``). NaN bounds print as ``n/a``. When the mean or a bound is 10 or more in
    size (a count, such as training steps: ``-13 [-64, +39]``) all three print whole, since ``digits`` decimals of
    a step would be false precision."""
    finite = [abs(x) for x in (mean, *ci) if x is not None and not math.isnan(x)]
    if finite and max(finite) >= 10:
        digits = 0
    return f"{signed(mean, digits)} [{label}{signed(ci[0], digits)}, {signed(ci[1], digits)}]"


class _ReadsAsDict:
    """Read access for code written when these results were dicts: ``obj["mean"]`` is ``obj.mean``; a field the
    dict would not have had (an optional field left None, see ``_OPTIONAL``) is missing (KeyError, not ``in``)."""

    _OPTIONAL: tuple[str, ...] = ()

    def __contains__(self, key: str) -> bool:
        return key in {f.name for f in fields(self)} and not (key in self._OPTIONAL and getattr(self, key) is None)

    def __getitem__(self, key: str):
        if key not in self:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default=None):
        return self[key] if key in self else default


@dataclass(frozen=True)
class PairedDiff(_ReadsAsDict):
    """Per-seed differences ``variant[i] − baseline[i]`` and their summary.

    Attributes:
        diffs: one difference per seed, in seed order (the quantity's units, e.g. nats).
        mean, sd: their mean and sample sd (ddof = 1; sd NaN for one seed).
        n: number of seeds.
        ci: Student-t interval of the mean, ``(low, high)`` (95 % by default; NaN bounds for one seed).
        t: ``mean / (sd / sqrt(n))`` (± inf when every difference is equal and non-zero; NaN for one seed).
        n_negative: how many differences are below 0 (for losses: seeds on which the variant is better).
    """

    diffs: list[float]
    mean: float
    sd: float
    n: int
    ci: tuple[float, float]
    t: float
    n_negative: int

    def interval(self, digits: int = 3, label: str = "") -> str:
        """``+0.012 [-0.004, +0.028]`` (see :func:`interval`)."""
        return interval(self.mean, self.ci, digits, label)

    def __str__(self) -> str:
        return f"{self.interval()}, {self.n_negative}/{self.n} seeds below 0"

    def to_dict(self) -> dict:
        """The JSON-ready dict: keys ``diffs, mean, sd, n, ci, t, n_negative`` (``ci`` a list once in JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> PairedDiff:
        """Rebuild from :meth:`to_dict` or a stored JSON dict. Raises KeyError when a key is missing."""
        return cls(list(d["diffs"]), d["mean"], d["sd"], d["n"], _pair(d["ci"]), d["t"], d["n_negative"])


def _pair(ci) -> tuple[float, float]:
    low, high = ci     # JSON stores NaN bounds as NaN (json allows it) and a tuple as a list
    return (NAN if low is None else low, NAN if high is None else high)


@dataclass(frozen=True)
class DeclaredTest:
    """One pre-declared test.

    Attributes:
        name: key of the test in a recipe's table.
        claim: the published claim in words, with its source (paper figure/table, or "author's post").
        quantity: what is computed per seed (a paired difference, a coefficient, ...), in words.
        comparison: against what (e.g. "− baseline, same seed", "− scale_v control, same seed").
        direction: ``"negative"`` or ``"positive"``: the side of ``threshold`` the claim predicts.
        threshold: the value the quantity must clear (0 for a sign claim).
        family: ``"primary"`` or the name of a family of secondary tests (Holm-corrected together).
        effect_for_power: the published effect, in the quantity's units, measured from ``threshold`` (signed: it
            points in ``direction``); None = "an effect of one observed seed sd" (d = 1).

    Raises:
        ValueError: ``direction`` is neither ``"negative"`` nor ``"positive"``.
    """

    name: str
    claim: str
    quantity: str
    comparison: str
    direction: str
    threshold: float = 0.0
    family: str = "primary"
    effect_for_power: float | None = None

    def __post_init__(self):
        if self.direction not in ("negative", "positive"):
            raise ValueError(f"direction must be 'negative' or 'positive', got {self.direction!r}")


def t_statistic(mean: float, sd: float, n: int, threshold: float = 0.0) -> float:
    """One-sample t of a mean against ``threshold``: ``(mean − threshold) / (sd / sqrt(n))``; ± inf when sd is 0 and
    the mean differs from the threshold, NaN when it does not or when n < 2."""
    if n < 2:
        return NAN
    se = sd / math.sqrt(n)
    if se > 0:
        return (mean - threshold) / se
    return math.copysign(math.inf, mean - threshold) if mean != threshold else NAN


@dataclass(frozen=True)
class Verdict(_ReadsAsDict):
    """One declared test, judged (:func:`~vrs_edu.lab.analysis.judge`).

    Attributes:
        test: the declaration.
        values: the per-seed quantity; n, mean, sd: their count, mean and sample sd.
        ci: the unadjusted 95 % Student-t interval of the mean; t, p: t statistic and two-sided p-value against
            ``test.threshold``.
        p_holm: p after Holm's correction within the test's family of ``family_size`` tests.
        verdict: ``"reproduced"``, ``"contradicted"`` or ``"undecided"``.
        power: the chance the test had to be decided if the true effect were ``power_effect`` (signed, in the
            quantity's units): the published effect (``power_basis`` "published") or one seed sd ("d = 1").
    """

    test: DeclaredTest
    values: list[float]
    n: int
    mean: float
    sd: float
    ci: tuple[float, float]
    t: float
    p: float
    p_holm: float
    family_size: int
    verdict: str
    power: float
    power_effect: float
    power_basis: str

    def interval(self, digits: int = 3, label: str = "") -> str:
        """``+0.012 [-0.004, +0.028]`` (see :func:`interval`)."""
        return interval(self.mean, self.ci, digits, label)

    def sentence(self, digits: int = 3) -> str:
        """``mean [95% CI lo, hi], p (Holm) p: verdict``, and for an undecided test its power ("at -0.027": the
        published effect, always at 3 decimals; "at d = 1": one seed sd), as the chapters print it."""
        out = f"{self.interval(digits, '95% CI ')}, p (Holm) {self.p_holm:.3f}: {self.verdict}"
        if self.verdict == "undecided":
            at = signed(self.power_effect) if self.power_basis == "published" else "d = 1"
            out += f" (power {self.power:.0%} at {at})"
        return out

    def __str__(self) -> str:
        return self.sentence()

    def to_record(self) -> dict:
        """The JSON-ready record a recipe stores under ``result["verdicts"]``: the declaration's fields, then the
        numbers and the verdict (no ``t``: it follows from mean, sd, n and the threshold)."""
        t = self.test
        return {"name": t.name, "claim": t.claim, "quantity": t.quantity, "comparison": t.comparison,
                "direction": t.direction, "threshold": t.threshold, "family": t.family,
                "effect_for_power": t.effect_for_power, "values": self.values, "n": self.n, "mean": self.mean,
                "sd": self.sd, "ci": list(self.ci), "p": self.p, "p_holm": self.p_holm,
                "family_size": self.family_size, "verdict": self.verdict, "power": self.power,
                "power_effect": self.power_effect, "power_basis": self.power_basis}

    @classmethod
    def from_record(cls, rec: dict) -> Verdict:
        """Rebuild a verdict from a stored record (:meth:`to_record`). ``t`` is recomputed from mean, sd and n. A
        record written before ``power_basis`` was stored gets it from its ``effect_for_power``, as the code of that
        time chose the effect (the published one when declared, else one seed sd). Raises KeyError when a key
        other than ``power_basis`` is missing."""
        test = DeclaredTest(rec["name"], rec["claim"], rec["quantity"], rec["comparison"], rec["direction"],
                            rec["threshold"], rec["family"], rec["effect_for_power"])
        basis = rec.get("power_basis") or ("published" if rec["effect_for_power"] is not None else "d = 1")
        return cls(test, list(rec["values"]), rec["n"], rec["mean"], rec["sd"], _pair(rec["ci"]),
                   t_statistic(rec["mean"], rec["sd"], rec["n"], rec["threshold"]), rec["p"], rec["p_holm"],
                   rec["family_size"], rec["verdict"], rec["power"], rec["power_effect"], basis)


@dataclass(frozen=True)
class Comparison(_ReadsAsDict):
    """One variant's runs against the baseline's, seed by seed (:func:`~vrs_edu.lab.analysis.compare_to_baseline`).

    Attributes:
        seeds: the seeds, ascending; final_val_loss, final_val_acc, run_wall_time_s: one entry per seed.
        final_mean, final_sd: mean and sample sd of the final validation loss (nats).
        s_per_step: measured seconds per training step (None when not timed).
        The baseline's own entry has the fields below None (:attr:`is_baseline`); every other variant's:
        paired_final: variant − baseline, final validation loss.
        paired_curve: the paired difference at every evaluation, ``{"steps", "mean", "ci_low", "ci_high"}``.
        before_decay_step, paired_before_decay: the last evaluation before the LR decay, and the difference there.
        sample_efficiency: ``{"per_seed", "n_reached", "mean", "sd"}`` of the steps ratio (None per seed and for
            mean/sd when not reached).
        equal_time: ``{"seconds", "variant_steps", "baseline_steps", "paired"}`` (``paired`` a PairedDiff); None
            without step times.
    """

    _OPTIONAL = ("paired_final", "paired_curve", "before_decay_step", "paired_before_decay", "sample_efficiency",
                 "equal_time")

    seeds: list[int]
    final_val_loss: list[float]
    final_mean: float
    final_sd: float
    final_val_acc: list[float]
    run_wall_time_s: list[float]
    s_per_step: float | None
    paired_final: PairedDiff | None = None
    paired_curve: dict | None = None
    before_decay_step: int | None = None
    paired_before_decay: PairedDiff | None = None
    sample_efficiency: dict | None = None
    equal_time: dict | None = None

    @property
    def is_baseline(self) -> bool:
        """True for the baseline's own entry (nothing to pair with)."""
        return self.paired_final is None

    def to_dict(self) -> dict:
        """The JSON-ready dict with the keys stored before: the optional fields only when set."""
        return {k: v for k, v in asdict(self).items() if k not in self._OPTIONAL or v is not None}

    @classmethod
    def from_dict(cls, d: dict) -> Comparison:
        """Rebuild from :meth:`to_dict` or a stored JSON dict. Raises KeyError when a required key is missing."""
        def paired(x):
            return None if x is None else PairedDiff.from_dict(x)
        eq = d.get("equal_time")
        return cls(d["seeds"], d["final_val_loss"], d["final_mean"], d["final_sd"], d["final_val_acc"],
                   d["run_wall_time_s"], d["s_per_step"], paired(d.get("paired_final")), d.get("paired_curve"),
                   d.get("before_decay_step"), paired(d.get("paired_before_decay")), d.get("sample_efficiency"),
                   None if eq is None else {**eq, "paired": paired(eq["paired"])})


def to_json(obj):
    """``json.dumps(..., default=to_json)``: a typed result as its dict (``to_dict``), anything else as a float
    (numpy and torch scalars). Raises TypeError for an object that is neither."""
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return float(obj)
