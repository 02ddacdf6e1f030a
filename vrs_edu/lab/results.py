"""Typed results of :mod:`vrs_edu.lab.analysis`: what its comparisons return, how each prints and how it is stored.

* :class:`PairedDiff` — per-seed ``variant − baseline`` differences and their Student-t summary
  (:func:`~vrs_edu.lab.analysis.paired_difference`); prints as ``+0.006 [-0.020, +0.032], 2/5 seeds below 0``.
* :class:`DeclaredTest` — one test declared before the run (the claim, the per-seed quantity, the side of a
  threshold the claim predicts, the family it is Holm-corrected in).
* :class:`Verdict` — one declared test judged (:func:`~vrs_edu.lab.analysis.judge`): the test and its numbers;
  prints as the sentence the chapters show, ``-0.002 [95% CI -0.018, +0.014], p (Holm) 0.749: undecided (power 93%
  at -0.027)``; :meth:`Verdict.to_record` is what a recipe stores under ``result["verdicts"]``.
* :class:`Precondition` / :class:`PreconditionOutcome` — a declared fact about the set-up that a claim needs (e.g.
  "a run reads less than one epoch"), judged from one number, and its outcome.
* :class:`Comparison` — one variant against the baseline (:func:`~vrs_edu.lab.analysis.compare_to_baseline`).

Verdicts (:data:`VERDICTS`): *reproduced*, *contradicted*, *undecided* (with the power the test had at its declared
effect, or the reason it could not be decided: zero variance, fewer than 3 seeds), *negligible* (the 95 % interval
lies entirely inside ± the test's declared smallest effect: whatever the sign, the effect is too small to matter),
*out of regime* (a declared precondition failed: not counted either way, not in its family's Holm correction; it
carries its *would-be* verdict, what the data say if judged), *n/a* (a control whose main effect was not
reproduced: there is no gain for it to explain; with its would-be verdict too) and *rate-dependent* (a test declared
over a sweep whose arms are decided in opposite directions).

A test has one of two forms (:data:`FORMS`): ``"sign"`` (the quantity lies on ``direction``'s side of ``threshold``)
or ``"equivalence"`` (the quantity lies within ``threshold ± |effect_for_power|``, judged by two one-sided tests:
tolerance and "no worse" claims, and set-up checks such as "an identity patch is free").

Every result is saved as JSON with the keys the plain dicts had before (``to_dict``/``to_record``) and rebuilt from
it (``from_dict``/``from_record``), so files written before and after read the same. During the move from dicts,
``obj["field"]`` reads ``obj.field`` and ``"field" in obj`` says whether the dict would have had that key, so code
written for the dicts keeps working; new code reads attributes.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from vrs_edu.i18n import evidence as E
from vrs_edu.i18n.language import resolve_language

NAN = float("nan")

VERDICTS = ("reproduced", "contradicted", "undecided", "negligible", "out of regime", "n/a", "rate-dependent")
DECIDED = ("reproduced", "contradicted", "negligible")   # the verdicts that count for or against a claim
KINDS = ("claim", "control", "check")   # a published claim; a control of one; a check of the set-up
FORMS = ("sign", "equivalence")         # which side of a threshold; or inside a band around it (TOST)
# The verdict words a failing precondition can block (Precondition.gates): "both" blocks every judged reading.
GATES = {"both": ("reproduced", "contradicted", "negligible", "undecided"), "reproduced": ("reproduced",),
         "contradicted": ("contradicted",)}


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
        t: ``mean / (sd / sqrt(n))`` (NaN for one seed and when every difference is equal: no spread to scale by).
        n_negative: how many differences are below 0 (for losses: seeds on which the variant is better).
        reason: why no test can be decided from these differences (None when one can): every seed gave the same
            difference (zero variance), or fewer than 3 distinct seeds (:func:`~vrs_edu.lab.analysis.t_test`).
    """

    diffs: list[float]
    mean: float
    sd: float
    n: int
    ci: tuple[float, float]
    t: float
    n_negative: int
    reason: str | None = None

    def interval(self, digits: int = 3, label: str = "") -> str:
        """``+0.012 [-0.004, +0.028]`` (see :func:`interval`)."""
        return interval(self.mean, self.ci, digits, label)

    def __str__(self) -> str:
        out = f"{self.interval()}, {self.n_negative}/{self.n} seeds below 0"
        return out if self.reason is None else f"{out} (undecidable: {self.reason})"

    def to_dict(self) -> dict:
        """The JSON-ready dict: keys ``diffs, mean, sd, n, ci, t, n_negative`` (``ci`` a list once in JSON), and
        ``reason`` when no test can be decided from them."""
        d = asdict(self)
        if d["reason"] is None:
            del d["reason"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> PairedDiff:
        """Rebuild from :meth:`to_dict` or a stored JSON dict. Raises KeyError when a key is missing."""
        return cls(list(d["diffs"]), d["mean"], d["sd"], d["n"], _pair(d["ci"]), d["t"], d["n_negative"],
                   d.get("reason"))


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
        family: ``"primary"`` or the name of a family of tests Holm-corrected together. A family holds tests of one
            ``kind`` only, so that set-up checks and controls never dilute (or pad) the claims' correction.
        effect_for_power: the smallest effect of interest, in the quantity's units, measured from ``threshold``
            (signed: it points in ``direction``); the power of an undecided test is reported at it. None = none
            declared: no power is reported (an effect of "one seed sd" is a property of the noise, not of the claim).
        effect_source: where that effect comes from: ``"paper: ..."`` (a published number, converted to our units)
            or ``"declared: ..."`` (a smallest effect of interest chosen before the run, with the reason).
        kind: ``"claim"`` (a published claim), ``"control"`` (a control of a claim's gain: judged only when ``gate``
            is reproduced, else *n/a*) or ``"check"`` (a check of the set-up; a claim may require it).
        requires: names of the checks and :class:`Precondition` s that must hold for the test to be judged; when one
            fails the verdict is *out of regime* and the test leaves its family's Holm correction.
        gate: for a control, the name of the claim whose reproduced effect it explains.
        sweep: the name of a declared sweep (e.g. ``"coef_lr"``) the test is judged at every point of; its values
            are then ``{arm: per-seed values}`` and it is reproduced or contradicted only if it is so at every arm,
            else *undecided* (or *rate-dependent* when arms are decided in opposite directions): an intersection-union
            test, level alpha without a further correction.
        form: ``"sign"`` (default: the quantity lies on ``direction``'s side of ``threshold``; *negligible* when its
            interval lies inside ``threshold ± |effect_for_power|``) or ``"equivalence"`` (the claim is that the
            quantity lies inside that band: two one-sided tests, Schuirmann 1987; ``effect_for_power`` is the
            margin, and ``direction`` only fixes its sign).

    Raises:
        ValueError: ``direction`` is neither ``"negative"`` nor ``"positive"``; an unknown ``kind`` or ``form``; a
            control without a ``gate`` or a gate on another kind; an effect that points against ``direction``; an
            equivalence test without a non-zero margin.
    """

    name: str
    claim: str
    quantity: str
    comparison: str
    direction: str
    threshold: float = 0.0
    family: str = "primary"
    effect_for_power: float | None = None
    effect_source: str | None = None
    kind: str = "claim"
    requires: tuple[str, ...] = ()
    gate: str | None = None
    sweep: str | None = None
    form: str = "sign"

    def __post_init__(self):
        if self.direction not in ("negative", "positive"):
            raise ValueError(f"direction must be 'negative' or 'positive', got {self.direction!r}")
        if self.form not in FORMS:
            raise ValueError(f"test {self.name!r}: form must be one of {FORMS}, got {self.form!r}")
        if self.form == "equivalence" and not self.effect_for_power:
            raise ValueError(f"test {self.name!r}: an equivalence test needs its margin as effect_for_power (a "
                             f"non-zero number in the quantity's units), got {self.effect_for_power!r}")
        if self.kind not in KINDS:
            raise ValueError(f"test {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if (self.kind == "control") != (self.gate is not None):
            raise ValueError(f"test {self.name!r}: a control needs a gate (the claim whose gain it explains) and only "
                             f"a control has one; got kind {self.kind!r}, gate {self.gate!r}")
        if isinstance(self.requires, str) or not all(isinstance(r, str) for r in self.requires):
            raise ValueError(f"test {self.name!r}: requires must be a tuple of names, got {self.requires!r}")
        object.__setattr__(self, "requires", tuple(self.requires))
        e = self.effect_for_power
        if e is not None and (e > 0) != (self.direction == "positive"):
            raise ValueError(f"test {self.name!r}: effect_for_power {e:+g} points against direction "
                             f"{self.direction!r}")

    def to_record(self) -> dict:
        """The declaration's fields, JSON-ready (``requires`` a list)."""
        return {"name": self.name, "claim": self.claim, "quantity": self.quantity, "comparison": self.comparison,
                "direction": self.direction, "threshold": self.threshold, "family": self.family,
                "effect_for_power": self.effect_for_power, "effect_source": self.effect_source, "kind": self.kind,
                "requires": list(self.requires), "gate": self.gate, "sweep": self.sweep, "form": self.form}

    @classmethod
    def from_record(cls, rec: dict) -> DeclaredTest:
        """Rebuild from :meth:`to_record` or a stored verdict record; a record written before kinds, gates and
        sweeps existed reads as a claim with none; one written before forms, as a sign test."""
        return cls(rec["name"], rec["claim"], rec["quantity"], rec["comparison"], rec["direction"],
                   rec["threshold"], rec["family"], rec["effect_for_power"], rec.get("effect_source"),
                   rec.get("kind", "claim"), tuple(rec.get("requires", ())), rec.get("gate"), rec.get("sweep"),
                   rec.get("form", "sign"))

    @property
    def margin(self) -> float | None:
        """``|effect_for_power|``: the half-width of the band an equivalence test tests, or of the band inside
        which a sign test's interval reads *negligible*; None when no effect is declared."""
        return None if self.effect_for_power is None else abs(self.effect_for_power)


@dataclass(frozen=True)
class Precondition:
    """A declared fact about the set-up that a claim needs, read from one number (no statistics): it holds when the
    value lies strictly on ``direction``'s side of ``threshold`` (e.g. epochs read < 1; the share of (layer, seed)
    coefficient series that reached a plateau > 0.5). A NaN value never holds.

    ``gates`` says which readings a failure blocks, i.e. which direction the premise protects: ``"both"`` (every
    judged verdict becomes *out of regime*), ``"reproduced"`` (only a would-be reproduction: a premise without which
    the effect could appear for another reason) or ``"contradicted"`` (only a would-be contradiction or null: a
    premise without which the effect cannot show), or a tuple of verdict words (:data:`GATES`).

    Raises:
        ValueError: ``direction`` is neither ``"negative"`` (below) nor ``"positive"`` (above); unknown ``gates``.
    """

    name: str
    premise: str
    quantity: str
    direction: str
    threshold: float
    gates: str | tuple = "both"

    def __post_init__(self):
        if self.direction not in ("negative", "positive"):
            raise ValueError(f"precondition {self.name!r}: direction must be 'negative' or 'positive', got "
                             f"{self.direction!r}")
        words = GATES.get(self.gates) if isinstance(self.gates, str) else tuple(self.gates)
        if not words or any(w not in GATES["both"] for w in words):
            raise ValueError(f"precondition {self.name!r}: gates must be one of {tuple(GATES)} or a tuple of "
                             f"verdicts among {GATES['both']}, got {self.gates!r}")
        if not isinstance(self.gates, str):
            object.__setattr__(self, "gates", tuple(self.gates))

    @property
    def blocks(self) -> tuple[str, ...]:
        """The verdict words a failure of this precondition turns into *out of regime*."""
        return GATES[self.gates] if isinstance(self.gates, str) else self.gates

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies on the declared side of the threshold."""
        if value is None or math.isnan(value):
            return False
        return value < self.threshold if self.direction == "negative" else value > self.threshold

    def judge(self, value: float | dict[str, float]) -> PreconditionOutcome:
        """The outcome for one value, or for ``{arm: value}`` over a sweep (then it holds where every arm does)."""
        if isinstance(value, dict):
            arms = {a: self.holds(v) for a, v in value.items()}
            return PreconditionOutcome(self, dict(value), all(arms.values()), arms)
        return PreconditionOutcome(self, float(value), self.holds(value))

    def to_record(self) -> dict:
        rec = asdict(self)
        rec["gates"] = self.gates if isinstance(self.gates, str) else list(self.gates)
        return rec


@dataclass(frozen=True)
class PreconditionOutcome(_ReadsAsDict):
    """A :class:`Precondition` read on one result: its value (or ``{arm: value}``) and whether it holds (at every arm;
    ``arms``: per arm)."""

    precondition: Precondition
    value: float | dict
    holds: bool
    arms: dict | None = None

    def holds_at(self, arm: str | None) -> bool:
        """Whether it holds at ``arm`` of a sweep (its overall outcome when it has no arms or ``arm`` is None)."""
        return self.holds if self.arms is None or arm is None else self.arms[arm]

    def value_at(self, arm: str | None) -> float:
        return self.value[arm] if isinstance(self.value, dict) and arm is not None else self.value

    def because(self, arm: str | None = None, lang: str | None = None) -> str:
        """``epochs_read 6.120 (needs < 1): fails`` — the outcome in words (at ``arm`` when given), in ``lang``
        (None: the running notebook's edition; a verdict's stored reason is written with ``"en"``)."""
        p, v = self.precondition, self.value_at(arm)
        shown = (", ".join(f"{a} {x:.3f}" for a, x in v.items()) if isinstance(v, dict) else f"{v:.3f}")
        return E.because(p.name, shown, "<" if p.direction == "negative" else ">", p.threshold, self.holds_at(arm),
                         resolve_language(lang))

    def __str__(self) -> str:
        return self.because()

    def to_record(self) -> dict:
        """``{"name", "premise", "quantity", "direction", "threshold", "value", "holds"}`` (+ ``"arms"`` per arm)."""
        rec = {**self.precondition.to_record(), "value": self.value, "holds": self.holds}
        if self.arms is not None:
            rec["arms"] = self.arms
        return rec

    @classmethod
    def from_record(cls, rec: dict) -> PreconditionOutcome:
        gates = rec.get("gates", "both")
        p = Precondition(rec["name"], rec["premise"], rec["quantity"], rec["direction"], rec["threshold"],
                         gates if isinstance(gates, str) else tuple(gates))
        return cls(p, rec["value"], rec["holds"], rec.get("arms"))


def t_statistic(mean: float, sd: float, n: int, threshold: float = 0.0) -> float:
    """One-sample t of a mean against ``threshold``: ``(mean − threshold) / (sd / sqrt(n))``; NaN when n < 2 or when
    sd is 0 (identical values: there is no spread to measure the distance in, so no t; the test is undecidable,
    see :func:`~vrs_edu.lab.analysis.t_test`)."""
    if n < 2:
        return NAN
    se = sd / math.sqrt(n)
    return (mean - threshold) / se if se > 0 else NAN


@dataclass(frozen=True)
class Verdict(_ReadsAsDict):
    """One declared test, judged (:func:`~vrs_edu.lab.analysis.judge`).

    Attributes:
        test: the declaration.
        values: the per-seed quantity; n, mean, sd: their count, mean and sample sd.
        ci: the unadjusted 95 % Student-t interval of the mean; t, p: t statistic and two-sided p-value against
            ``test.threshold`` (NaN when undecidable: see ``reason``).
        p_holm: p after Holm's correction within the test's family of ``family_size`` judged tests (NaN for a test
            out of regime, n/a, or undecidable).
        verdict: one of :data:`VERDICTS`.
        power: the chance the test had to be decided if the true effect were ``power_effect`` (signed, in the
            quantity's units: the declared effect, ``power_basis`` "declared"); NaN with basis "none" when no effect
            was declared. Records written before declared effects read "published" or "d = 1" here.
        reason: why the test is undecidable, out of regime or n/a (None otherwise).
        arms: for a test declared over a sweep, ``((arm, Verdict), ...)`` at every arm; the numbers above are then
            those of the first (nominal) arm and ``verdict`` combines the arms.
        would_be: for an *out of regime* or *n/a* verdict, the verdict the data give when the test is judged as if
            every precondition held (Holm over its whole family); None otherwise.
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
    power_effect: float | None
    power_basis: str
    reason: str | None = None
    arms: tuple | None = None
    would_be: str | None = None

    def interval(self, digits: int = 3, label: str = "") -> str:
        """``+0.012 [-0.004, +0.028]`` (see :func:`interval`)."""
        return interval(self.mean, self.ci, digits, label)

    @property
    def counted(self) -> bool:
        """Whether the verdict counts for or against its claim: reproduced, contradicted or negligible (:data:`DECIDED`;
        not out of regime, n/a, undecided or rate-dependent)."""
        return self.verdict in DECIDED

    @property
    def verdict_words(self) -> str:
        """The verdict with its would-be verdict where it has one: ``out of regime (would be: contradicted)``."""
        return E.verdict_words(self.verdict, self.would_be, "en")

    def _power_text(self, lang: str) -> str:
        if self.power_basis == "none":
            return E.NO_EFFECT[lang]
        e = self.power_effect   # a count (steps) prints whole, like its interval; "d = 1": an old record
        at = "d = 1" if self.power_basis == "d = 1" else signed(e, 0 if e is not None and abs(e) >= 10 else 3)
        return E.power_at('n/a' if math.isnan(self.power) else f'{self.power:.0%}', at, lang, word=True)

    def sentence(self, digits: int = 3, lang: str | None = None) -> str:
        """``mean [95% CI lo, hi], p (Holm) p: verdict``, and for an undecided test its power at the declared effect
        (always at 3 decimals) or the reason it could not be decided; an out-of-regime or n/a test gives its reason;
        a swept test one clause per arm. As the chapters print it, in ``lang`` (None: the running notebook's
        edition; Korean: ``… [95% 신뢰구간 …], Holm 보정 후 p …: 미정 (…에서 검정력 93%)``)."""
        lang = resolve_language(lang)
        words = E.verdict_words(self.verdict, self.would_be, lang)
        if self.arms is not None:
            parts = "; ".join(f"{a} {v.interval(digits)} {E.verdict_words(v.verdict, v.would_be, lang)}"
                              for a, v in self.arms)
            said = self.reason and self.verdict in ("out of regime", "undecided")
            return E.across(words, self.test.sweep, parts, lang) + (f": {E.reason(self.reason, lang)}" if said else "")
        head = self.interval(digits, E.CI_LABEL[lang])
        if self.verdict in ("out of regime", "n/a") or (self.verdict == "undecided" and self.reason):
            return f"{head}: {words} ({E.reason(self.reason, lang)})"
        out = f"{head}, {E.p_holm(self.p_holm, lang)}: "
        if self.verdict == "negligible":
            return out + E.negligible(self.test.margin, lang)
        return out + words + (f" ({self._power_text(lang)})" if self.verdict == "undecided" else "")

    def __str__(self) -> str:
        return self.sentence()

    def to_record(self) -> dict:
        """The JSON-ready record a recipe stores under ``result["verdicts"]``: the declaration's fields, then the
        numbers and the verdict (no ``t``: it follows from mean, sd, n and the threshold); ``reason`` and, for a
        swept test, ``arms`` (a record per arm) when set."""
        rec = {**self.test.to_record(), "values": self.values, "n": self.n, "mean": self.mean, "sd": self.sd,
               "ci": list(self.ci), "p": self.p, "p_holm": self.p_holm, "family_size": self.family_size,
               "verdict": self.verdict, "power": self.power, "power_effect": self.power_effect,
               "power_basis": self.power_basis}
        if self.reason is not None:
            rec["reason"] = self.reason
        if self.arms is not None:
            rec["arms"] = [{"arm": a, **v.to_record()} for a, v in self.arms]
        if self.would_be is not None:
            rec["would_be"] = self.would_be
        return rec

    @classmethod
    def from_record(cls, rec: dict) -> Verdict:
        """Rebuild a verdict from a stored record (:meth:`to_record`). ``t`` is recomputed from mean, sd and n. A
        record written before ``power_basis`` was stored gets it from its ``effect_for_power``, as the code of that
        time chose the effect (the published one when declared, else one seed sd). Raises KeyError when a key
        other than ``power_basis``, ``reason``, ``arms`` and the declaration's newer fields is missing."""
        test = DeclaredTest.from_record(rec)
        basis = rec.get("power_basis") or ("published" if rec["effect_for_power"] is not None else "d = 1")
        arms = rec.get("arms")
        return cls(test, list(rec["values"]), rec["n"], rec["mean"], rec["sd"], _pair(rec["ci"]),
                   t_statistic(rec["mean"], rec["sd"], rec["n"], rec["threshold"]), rec["p"], rec["p_holm"],
                   rec["family_size"], rec["verdict"], rec["power"], rec["power_effect"], basis, rec.get("reason"),
                   None if arms is None else tuple((a["arm"], cls.from_record(a)) for a in arms),
                   rec.get("would_be"))


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
        """The JSON-ready dict with the keys stored before: the optional fields only when set (a paired difference
        as :meth:`PairedDiff.to_dict`, so its ``reason`` only when it has one)."""
        def plain(v):
            if isinstance(v, PairedDiff):
                return v.to_dict()
            return {k: plain(x) for k, x in v.items()} if isinstance(v, dict) else v
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)
                if f.name not in self._OPTIONAL or getattr(self, f.name) is not None}

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
