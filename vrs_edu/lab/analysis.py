"""Statistics for comparing training runs across seeds: the numbers chapters 03–04 print from saved results.

Everything here takes plain lists of numbers (one entry per seed, or one curve per seed) and returns plain numbers or
the typed results of :mod:`vrs_edu.lab.results` (which print themselves and store as JSON), so the recipes, the
notebooks and the tests all use the same arithmetic.

* :func:`mean_sd` — mean and sample standard deviation (ddof = 1) across seeds.
* :func:`paired_difference` — per-seed ``variant − baseline`` differences, their mean, sd, a Student-t 95 %
  confidence interval and t statistic (a :class:`~vrs_edu.lab.results.PairedDiff`). Same seed ⇒ same initial
  weights and batches, so the pairing removes most of the seed-to-seed spread (in pilot runs on this CPU,
  word-level 12 × 64 models, the baseline's final loss varied by 0.010–0.013 nats from seed to seed: as much as
  the value residual's effect).
* :func:`steps_to_reach` / :func:`sample_efficiency_ratio` — ResFormer's data-efficiency measure (arXiv 2410.17897,
  "X % less data for equal loss"): how many steps the variant needs to reach the baseline's final validation loss,
  linearly interpolated on the evaluation curve, divided by the baseline's steps. Below 1 = the variant needs less.
* :func:`loss_at_equal_time` — compare at equal wall time: the variant's loss after as many seconds as the baseline
  used, given each run's measured seconds per step.
* :func:`depth_slope` — least-squares slope of a per-layer profile (e.g. the learned λ on V_1) against layer index.

Declared tests and their verdicts (for a recipe's ``TESTS``; the types live in :mod:`vrs_edu.lab.results`)::

    from vrs_edu.lab.analysis import DeclaredTest, Precondition, judge

    SUB_EPOCH = Precondition("sub_epoch", "the runs cannot memorise the training text", "epochs read",
                             "negative", 1.0)                        # holds when the value is < 1
    TESTS = (
        DeclaredTest("premise", "the baseline concentrates attention", "entropy − uniform", "vs uniform",
                     "negative", 0.0, "setup", -0.05, "declared: ...", kind="check"),
        DeclaredTest("gain", "the method lowers the loss (paper, Table 5)", "Δ final val loss", "same seed",
                     "negative", 0.0, "primary", -0.027, "paper: 2.7389 → 2.7117", requires=("sub_epoch",)),
        DeclaredTest("beats_control", "the gain needs the mechanism", "Δ loss vs control", "same seed",
                     "negative", 0.0, "controls", -0.027, "paper: as the gain", kind="control", gate="gain"),
        DeclaredTest("share", "V reads x0", "x0 share", "vs 0.5", "positive", 0.5, "x0", 0.1,
                     "declared: ...", sweep="coef_lr"),           # values["share"] = {arm: per-seed values}
    )
    rows = judge(TESTS, values, preconditions=[SUB_EPOCH], facts={"sub_epoch": 0.6}, seeds=seeds)

* A verdict is one of ``VERDICTS``: reproduced, contradicted, undecided, **negligible** (a sign test whose 95 %
  interval lies inside ``threshold ± |effect_for_power|``: too small to matter whichever its sign, never reproduced
  or contradicted; review 3, H2), **out of regime** (a ``requires``d check not reproduced, or a
  :class:`Precondition` failed that gates this reading: ``gates`` names the direction a premise protects), **n/a**
  (a control whose ``gate`` claim is not reproduced) and **rate-dependent** (a ``sweep`` test decided in opposite
  directions at two arms; any other mixture of arms is undecided, with the arms' words as its reason).
  Out-of-regime and n/a tests leave their family's Holm correction and carry ``would_be``: the verdict the data give
  when judged as if every premise held (Holm over the whole family). ``row.counted`` says whether a verdict counts
  for or against its claim; ``row.reason`` says why it does not.
* Tolerance and "no worse" claims are ``form="equivalence"``: two one-sided t-tests (TOST) that the quantity lies
  within ``threshold ± |effect_for_power|``, reproduced when both reject, contradicted when it lies significantly
  outside the band. The one "no worse" rule of the course.
* Every claim and control declares ``effect_for_power``, its smallest effect of interest (judge raises otherwise).
* Families hold one ``kind`` each (``"claim"``, ``"control"``, ``"check"``): set-up checks and controls never share a
  Holm correction with the claims (judge raises ValueError otherwise).
* ``effect_for_power`` is the smallest effect of interest in the quantity's units (``effect_source``: "paper: ..."
  or "declared: ..."); power is reported at it; a test without one gets no power ("d = 1" is gone).
* Zero variance or fewer than 3 distinct seeds (``seeds=``) is *undecided* with the reason (:func:`t_test`: p NaN).
* Records (``Verdict.to_record``) keep every key they had and add ``effect_source, kind, requires, gate, sweep``
  (+ ``reason``, ``arms`` when set); ``Verdict.from_record`` reads records written before them.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from scipy import stats

from vrs_edu.i18n import declared
from vrs_edu.i18n import evidence as E
from vrs_edu.i18n.language import resolve_language
# The typed results, importable from here too (one import for a chapter or a recipe).
from vrs_edu.lab.results import (DECIDED, FORMS, GATES, KINDS, VERDICTS, Comparison, DeclaredTest,  # noqa: F401
                                 PairedDiff, Precondition, PreconditionOutcome, Verdict, interval, signed, t_statistic)


def _floats(values, name: str) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise ValueError(f"{name} is empty: need at least one number")
    return out


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean, summed in order (the course's one mean). Raises ValueError when empty."""
    xs = _floats(values, "values")
    return sum(xs) / len(xs)


def layer_means(result: dict) -> dict[str, list[float]]:
    """A stored result's ``per_layer`` readings (each: per layer, one value per sequence or sentence) as their
    means per layer: ``{reading: [mean at layer 0, …]}``, the form the norm recipes' chapters plot and quote."""
    return {k: [mean(v) for v in rows] for k, rows in result["per_layer"].items()}


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; ``nan`` for a single value). Raises ValueError when empty."""
    xs = _floats(values, "values")
    m = mean(xs)
    if len(xs) == 1:
        return m, float("nan")
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def student_t_cdf(t: float, df: int) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom (SciPy's ``scipy.stats.t``).
    Raises ValueError if df < 1."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    return float(stats.t.cdf(t, df))


def t_critical(df: int, level: float = 0.95) -> float:
    """Two-sided critical value of Student's t: ``P(|T| <= c) = level`` (df = 2, level 0.95 → 4.303), from SciPy's
    ``scipy.stats.t.ppf``. Raises ValueError on df < 1 or level outside (0, 1)."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return float(stats.t.ppf(0.5 + level / 2, df))


def paired_difference(variant: Sequence[float], baseline: Sequence[float], level: float = 0.95,
                      seeds: Sequence[int] | None = None) -> PairedDiff:
    """Per-seed differences ``variant[i] − baseline[i]`` and their summary.

    Returns a :class:`~vrs_edu.lab.results.PairedDiff` (diffs, mean, sd, n, ci = (low, high), t, n_negative,
    reason); the CI is the Student-t interval ``mean ± t_crit · sd / sqrt(n)`` (``nan`` bounds when n = 1 or when
    every difference is the same). For losses, negative = the variant is better. ``print`` gives e.g. ``+0.006
    [-0.020, +0.032], 2/5 seeds below 0``. ``seeds`` (one per value) lets :func:`t_test` count distinct seeds.

    Raises:
        ValueError: the two lists differ in length or are empty.
    """
    a, b = _floats(variant, "variant"), _floats(baseline, "baseline")
    if len(a) != len(b):
        raise ValueError(f"variant and baseline must have one value per seed each, got {len(a)} and {len(b)}")
    d = [x - y for x, y in zip(a, b)]
    s = t_test(d, 0.0, level, seeds)   # the mean of the differences against 0: the same interval and t as every test
    return PairedDiff(d, s["mean"], s["sd"], s["n"], s["ci"], s["t"], sum(x < 0 for x in d), s["reason"])


def ci_excludes_zero(summary: PairedDiff | dict, direction: str = "negative") -> bool:
    """True when the confidence interval of a :class:`~vrs_edu.lab.results.PairedDiff` (or of a stored one: any
    dict with ``"ci"``) lies entirely on the ``direction`` side of 0 (``"negative"`` or ``"positive"``). NaN bounds
    never count as excluding 0. Raises ValueError on another ``direction``."""
    if direction not in ("negative", "positive"):
        raise ValueError(f"direction must be 'negative' or 'positive', got {direction!r}")
    low, high = summary.ci if isinstance(summary, PairedDiff) else summary["ci"]
    if math.isnan(low) or math.isnan(high):
        return False
    return high < 0 if direction == "negative" else low > 0


def read_live_run(live: float, saved_mean: float, saved_sd: float,
                  saved_ci: tuple[float, float] | None = None) -> str:
    """How a chapter reads one short live run against the saved runs: the same direction (sign) as the saved mean or
    not, and whether the live value is larger than the saved runs' seed-to-seed sd — if not, one run cannot tell.
    With ``saved_ci`` (the saved runs' 95 % interval) spanning 0, the saved runs have no direction to agree with:
    the reading then only says whether the live value lies within one seed sd of the saved mean."""
    if saved_ci is not None and saved_ci[0] <= 0 <= saved_ci[1]:
        near = "within" if abs(live - saved_mean) <= saved_sd else "further than"
        return (f"the saved runs have no direction here (their 95% interval spans 0); the live run lies {near} "
                "one seed-to-seed sd of their mean")
    side = "points the same way as" if (live > 0) == (saved_mean > 0) else "points the other way from"
    size = (", by more than the seed-to-seed sd" if abs(live) > saved_sd
            else ", but by less than the seed-to-seed sd: one short run cannot tell the direction")
    return f"the live run {side} the saved runs{size}"


def _check_curve(steps, values) -> tuple[list[float], list[float]]:
    xs, ys = _floats(steps, "steps"), _floats(values, "values")
    if len(xs) != len(ys):
        raise ValueError(f"steps and values must have the same length, got {len(xs)} and {len(ys)}")
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError("steps must be strictly increasing")
    return xs, ys


def interpolate(steps: Sequence[float], values: Sequence[float], at: float) -> float:
    """Linear interpolation of a curve at ``at``; clamps to the end values outside the measured range."""
    xs, ys = _check_curve(steps, values)
    if at <= xs[0]:
        return ys[0]
    if at >= xs[-1]:
        return ys[-1]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x0 <= at <= x1:
            return y0 + (y1 - y0) * (at - x0) / (x1 - x0)
    raise AssertionError("unreachable")


def steps_to_reach(steps: Sequence[float], losses: Sequence[float], target: float) -> float | None:
    """First step at which the loss curve reaches ``target`` (≤), linearly interpolated between the two evaluations
    that bracket the crossing. ``None`` when the curve never gets there; the first step if it starts below."""
    xs, ys = _check_curve(steps, losses)
    if ys[0] <= target:
        return xs[0]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if y1 <= target:
            return x0 + (x1 - x0) * (y0 - target) / (y0 - y1)
    return None


def sample_efficiency_ratio(var_steps, var_losses, base_steps, base_losses) -> float | None:
    """Steps the variant needs to reach the baseline's *final* validation loss, divided by the baseline's steps.
    0.8 = "20 % less data" (ResFormer's measure). ``None`` when the variant never reaches it in its run."""
    _, base = _check_curve(base_steps, base_losses)
    need = steps_to_reach(var_steps, var_losses, base[-1])
    return None if need is None else need / float(base_steps[-1])


def loss_at_equal_time(var_steps, var_losses, var_s_per_step: float, seconds: float) -> float:
    """The variant's loss after ``seconds`` of training, at its measured ``var_s_per_step`` (interpolated on its
    eval curve; its final loss if it would have finished sooner). Raises ValueError on non-positive times."""
    if var_s_per_step <= 0 or seconds <= 0:
        raise ValueError(f"seconds per step and seconds must be > 0, got {var_s_per_step} and {seconds}")
    return interpolate(var_steps, var_losses, seconds / var_s_per_step)


def band(curves: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Pointwise mean and sample sd of equally long curves (one per seed): the line and band of a seed plot."""
    curves = [list(c) for c in curves]
    if not curves or any(len(c) != len(curves[0]) for c in curves):
        raise ValueError("curves must be a non-empty list of equally long sequences")
    stats = [mean_sd(col) for col in zip(*curves)]
    return [m for m, _ in stats], [0.0 if math.isnan(s) else s for _, s in stats]


def depth_slope(values: Sequence[float], layers: Sequence[float] | None = None) -> float:
    """Least-squares slope of ``values`` against ``layers`` (default 0, 1, 2, ...). Positive = grows with depth.
    Raises ValueError with fewer than two points."""
    ys = _floats(values, "values")
    xs = list(range(len(ys))) if layers is None else _floats(layers, "layers")
    if len(xs) != len(ys) or len(ys) < 2:
        raise ValueError(f"need at least two (layer, value) pairs of equal length, got {len(xs)} and {len(ys)}")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("layers must not all be equal")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def _by_seed(runs: list[dict]) -> dict[int, dict]:
    return {r["seed"]: r for r in runs}


def before_decay_step(eval_steps: Sequence[int], steps: int, decay_frac: float = 0.3) -> int:
    """The last evaluation step at or before the learning-rate decay starts (``train.lr_factor``: the decay begins
    at ``int(steps · (1 − decay_frac))``): the "full learning rate" point of a loss curve. When no evaluation comes
    that early (very short runs), the first evaluation step. Raises ValueError on an empty ``eval_steps``."""
    steps_list = [int(s) for s in eval_steps]
    if not steps_list:
        raise ValueError("eval_steps is empty")
    start = int(steps * (1 - decay_frac))
    before = [s for s in steps_list if s <= start]
    return before[-1] if before else steps_list[0]


def compare_to_baseline(runs: dict[str, list[dict]], step_seconds: dict[str, float] | None = None,
                        baseline: str = "baseline", decay_frac: float = 0.3) -> dict[str, Comparison]:
    """Compare every variant with the baseline, seed by seed (runs as written by ``compare_variants``).

    Returns ``{variant: Comparison}`` (:class:`~vrs_edu.lab.results.Comparison`), the baseline's included. For
    each variant: final validation loss per seed and mean ± sd; the run wall times; and, for non-baseline
    variants, the paired difference (variant − baseline) of the final loss, of the loss at the last evaluation
    before the LR decay, at every evaluation step (the curve of mean and CI), at equal wall time (both losses
    interpolated at the shorter of the two runs' durations, from ``step_seconds``), and the per-seed
    :func:`sample_efficiency_ratio`.

    Raises:
        ValueError: the baseline is missing, or a variant has a seed the baseline lacks.
    """
    if baseline not in runs:
        raise ValueError(f"runs has no {baseline!r} entry (has {sorted(runs)})")
    base = _by_seed(runs[baseline])
    out = {}
    for name, rs in runs.items():
        rs = sorted(rs, key=lambda r: r["seed"])
        seeds = [r["seed"] for r in rs]
        missing = [s for s in seeds if s not in base]
        if missing:
            raise ValueError(f"variant {name!r} has seeds {missing} that the baseline lacks")
        finals = [r["final_val_loss"] for r in rs]
        m, sd = mean_sd(finals)
        own = dict(seeds=seeds, final_val_loss=finals, final_mean=m, final_sd=sd,
                   final_val_acc=[r["final_val_acc"] for r in rs],
                   run_wall_time_s=[r["history"]["wall_time_s"] for r in rs],
                   s_per_step=(step_seconds or {}).get(name))
        out[name] = Comparison(**own) if name == baseline else Comparison(
            **own, **_paired_with_baseline(rs, [base[s] for s in seeds], name, baseline, step_seconds, decay_frac))
    return out


def _paired_with_baseline(rs: list[dict], bs: list[dict], name: str, baseline: str,
                          step_seconds: dict[str, float] | None, decay_frac: float) -> dict:
    """The paired fields of one variant's :class:`~vrs_edu.lab.results.Comparison` (``rs`` and ``bs``: the
    variant's and the baseline's runs, same seeds in the same order)."""
    def curve(r):
        return r["history"]["eval_steps"], r["history"]["val_loss"]

    entry = {"paired_final": paired_difference([r["final_val_loss"] for r in rs], [b["final_val_loss"] for b in bs])}
    steps = rs[0]["history"]["eval_steps"]
    pc = {"steps": steps, "mean": [], "ci_low": [], "ci_high": []}
    for i, _ in enumerate(steps):
        d = paired_difference([r["history"]["val_loss"][i] for r in rs], [b["history"]["val_loss"][i] for b in bs])
        pc["mean"].append(d.mean)
        pc["ci_low"].append(d.ci[0])
        pc["ci_high"].append(d.ci[1])
    entry["paired_curve"] = pc
    n_steps = rs[0]["history"]["steps"][-1] + 1
    mid = before_decay_step(steps, n_steps, decay_frac)
    entry["before_decay_step"] = mid
    entry["paired_before_decay"] = paired_difference([interpolate(*curve(r), mid) for r in rs],
                                                     [interpolate(*curve(b), mid) for b in bs])
    ratios = [sample_efficiency_ratio(*curve(r), *curve(b)) for r, b in zip(rs, bs)]
    reached = [x for x in ratios if x is not None]
    entry["sample_efficiency"] = {"per_seed": ratios, "n_reached": len(reached),
                                  "mean": mean_sd(reached)[0] if reached else None,
                                  "sd": mean_sd(reached)[1] if reached else None}
    sv, sb = (step_seconds or {}).get(name), (step_seconds or {}).get(baseline)
    if sv and sb:
        nb = bs[0]["history"]["steps"][-1] + 1
        seconds = min(sv * n_steps, sb * nb)
        entry["equal_time"] = {
            "seconds": seconds, "variant_steps": seconds / sv, "baseline_steps": seconds / sb,
            "paired": paired_difference([loss_at_equal_time(*curve(r), sv, seconds) for r in rs],
                                        [loss_at_equal_time(*curve(b), sb, seconds) for b in bs])}
    return entry


def format_comparison(comparison: dict[str, Comparison], digits: int = 3, accuracy: bool = False,
                      lang: str | None = None) -> str:
    """Two text tables of a :func:`compare_to_baseline` result: final loss per variant (mean ± sd across seeds; with
    ``accuracy``, also the final answer accuracy, mean ± sd) with the paired difference to the baseline and its
    95 % CI; then the difference before the LR decay, at equal wall
    time, and the sample-efficiency ratio (mean ± sd over the seeds that reached the baseline's final loss).
    ``lang``: the edition of the column heads (None: the running notebook's)."""
    w = E.COMPARISON[resolve_language(lang)]
    lines = [E.pad(w["variant"], 13) + E.pad(w["final"], 17, ">") + (E.pad(w["accuracy"], 18, ">") if accuracy else "")
             + E.pad(w["delta"], 30, ">") + E.pad(w["below"], 15, ">")]
    for name, c in comparison.items():
        acc = ""
        if accuracy:
            m, sd = mean_sd(c.final_val_acc)
            acc = f"{m:>10.3f} ± {0.0 if math.isnan(sd) else sd:.3f}"
        row = f"{name:13s}{c.final_mean:>10.{digits}f} ± {c.final_sd:.{digits}f}{acc}"
        if not c.is_baseline:
            d = c.paired_final
            row += (f"{signed(d.mean, digits):>11s} [{signed(d.ci[0], digits)}, {signed(d.ci[1], digits)}]"
                    f"{d.n_negative:>8d} / {d.n}")
        lines.append(row)
    lines.append("")
    lines.append(E.pad(w["variant"], 13) + E.pad(w["before"], 34, ">") + E.pad(w["equal_time"], 17, ">")
                 + E.pad(w["efficiency"], 20, ">"))
    for name, c in comparison.items():
        if c.is_baseline:
            continue
        mid = f"{w['step']} {c.before_decay_step}: {c.paired_before_decay.interval(digits)}"
        et = signed(c.equal_time["paired"].mean, digits) if c.equal_time is not None else "n/a"
        se = c.sample_efficiency
        eff = (f"{se['mean']:.2f} ± {0.0 if math.isnan(se['sd']) else se['sd']:.2f} ({se['n_reached']}/"
               f"{len(se['per_seed'])})" if se["n_reached"] else f"{w['not_reached']} (0/{len(se['per_seed'])})")
        lines.append(f"{name:13s}{E.pad(mid, 34, '>')}{et:>17s}{E.pad(eff, 20, '>')}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# Pre-declared tests and their verdicts
#
# A recipe declares its tests (``DeclaredTest``) and the preconditions they need (``Precondition``) in code *before*
# the full run; git history shows the order. A test compares one per-seed quantity with a threshold: ``reproduced``
# when the evidence puts it on the published side, ``contradicted`` when it puts it on the opposite side,
# ``undecided`` otherwise, reported with the power the test had at its declared effect (or the reason it could not
# be decided). A test whose precondition failed is ``out of regime``; a control whose claim was not reproduced is
# ``n/a``; a test declared over a sweep that does not hold at every point is ``rate-dependent``. Tests are grouped in
# families of one kind; within a family the p-values of the tests actually judged are Holm-corrected (Holm 1979,
# step-down), so a chapter's many secondary tests cannot produce a "finding" by sheer number, and set-up checks and
# controls never share a correction with the claims. The declaration and the judged test are typed (results.py).

MIN_SEEDS = 3   # fewer distinct seeds than this decide nothing: one seed twice is one run, two seeds leave 1 df
MIN_ARMS = 3    # a claim declared over a sweep counts only when it holds at this many rates or more


def t_test(values: Sequence[float], threshold: float = 0.0, level: float = 0.95,
           seeds: Sequence[int] | None = None) -> dict:
    """One-sample Student-t summary of per-seed ``values`` against ``threshold``: ``{"values", "n", "mean", "sd",
    "ci", "t", "p", "reason"}`` with the two-sided ``level`` interval of the mean and the two-sided p-value (SciPy).

    A test that cannot be decided says why (``reason``) and gets ``p`` NaN, which no correction or verdict counts:
    every value equal (zero variance: t and the interval are NaN too; the same value from every seed is no evidence
    of a spread of zero, often it is one run counted twice), or fewer than :data:`MIN_SEEDS` distinct seeds
    (``seeds``, one per value, when given; else the number of values). With n < 2 the interval and t are NaN.

    Raises:
        ValueError: ``values`` is empty, or ``seeds`` does not have one entry per value.
    """
    xs = _floats(values, "values")
    m, sd = mean_sd(xs)
    n = len(xs)
    if seeds is not None and len(list(seeds)) != n:
        raise ValueError(f"seeds must have one entry per value, got {len(list(seeds))} seeds for {n} values")
    distinct = n if seeds is None else len(set(seeds))
    reasons = []
    if n >= 2 and len(set(xs)) == 1:
        reasons.append(f"zero variance: every seed gave {signed(xs[0])}")
    if distinct < MIN_SEEDS:
        reasons.append(f"{distinct} distinct seed{'' if distinct == 1 else 's'}, fewer than {MIN_SEEDS}"
                       + (f" (seeds {list(seeds)})" if seeds is not None and distinct < n else ""))
    nan = float("nan")
    t = t_statistic(m, sd, n, threshold)
    ci = (nan, nan)
    if n >= 2 and sd > 0:
        half = t_critical(n - 1, level) * (sd / math.sqrt(n))
        ci = (m - half, m + half)
    p = nan if reasons or math.isnan(t) else float(2 * stats.t.sf(abs(t), n - 1))
    return {"values": xs, "n": n, "mean": m, "sd": sd, "ci": ci, "t": t, "p": p,
            "reason": "; ".join(reasons) or None}


def power_paired_t(effect: float, sd: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided one-sample t-test at level ``alpha`` to detect a true mean shift ``effect`` when the
    per-seed sd is ``sd``, with ``n`` seeds (noncentral t, SciPy ``nct``). n = 3, d = effect/sd = 2: 0.47 (the
    review's figure); n = 5, d = 2: 0.91. NaN when sd is not positive or n < 2. Raises ValueError on alpha ∉ (0, 1)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n < 2 or not sd > 0 or math.isnan(effect):
        return float("nan")
    df, nc = n - 1, effect / (sd / math.sqrt(n))
    c = float(stats.t.ppf(1 - alpha / 2, df))
    return float(stats.nct.sf(c, df, nc) + stats.nct.cdf(-c, df, nc))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): sort ascending, multiply the i-th smallest by
    (m − i), take the running maximum, cap at 1. NaN p-values stay NaN and do not count in m."""
    ps = [float(p) for p in pvalues]
    idx = sorted((i for i, p in enumerate(ps) if not math.isnan(p)), key=lambda i: ps[i])
    m, out, running = len(idx), [float("nan")] * len(ps), 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def check_preconditions(preconditions: Sequence[Precondition], facts: dict) -> dict[str, PreconditionOutcome]:
    """``{name: outcome}`` of every declared precondition, read from ``facts[name]`` (a number, or ``{arm: number}``
    over a sweep). Raises ValueError naming a precondition without a value."""
    missing = [p.name for p in preconditions if p.name not in facts]
    if missing:
        raise ValueError(f"no value for declared preconditions {missing}")
    return {p.name: p.judge(facts[p.name]) for p in preconditions}


def _check_declarations(tests: list[DeclaredTest], preconditions: dict[str, Precondition]) -> dict[str, str]:
    """Validate a table of tests; returns ``{family: kind}``. Raises ValueError with the offending names."""
    names = [t.name for t in tests]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise ValueError(f"tests declared twice: {doubled}")
    by_name = {t.name: t for t in tests}
    bare = [t.name for t in tests if t.kind != "check" and t.effect_for_power is None]
    if bare:
        raise ValueError(f"claims and controls must declare effect_for_power (their smallest effect of interest, in "
                         f"the quantity's units), got none for {bare}")
    kinds: dict[str, str] = {}
    for t in tests:
        k = kinds.setdefault(t.family, t.kind)
        if k != t.kind:
            raise ValueError(f"family {t.family!r} mixes a {k} and a {t.kind} ({t.name}): set-up checks, claims and "
                             "controls are Holm-corrected in families of their own")
        for r in t.requires:
            if r in by_name and by_name[r].kind != "check":
                raise ValueError(f"test {t.name!r} requires {r!r}, which is a {by_name[r].kind}, not a check")
            if r not in by_name and r not in preconditions:
                raise ValueError(f"test {t.name!r} requires {r!r}: no such check or precondition is declared")
        if t.gate is not None and (t.gate not in by_name or by_name[t.gate].kind != "claim"):
            raise ValueError(f"control {t.name!r} is gated on {t.gate!r}, which is not a declared claim")
    for fam in kinds:
        sweeps = {t.sweep for t in tests if t.family == fam}
        if len(sweeps) > 1:
            raise ValueError(f"family {fam!r} mixes sweeps {sorted(map(str, sweeps))}: a family is corrected per arm")
    return kinds


def arm_rule(verdicts: list[str]) -> str:
    """The intersection-union rule on the verdict words of a swept test's arms. The same word at every arm is that
    word. Arms decided in opposite directions (one reproduced, one contradicted) are *rate-dependent*. Arms that
    are all out of regime or n/a give *out of regime* (or *n/a* when none is out of regime). Any other mixture —
    decided at some arms only, negligible at some, out of regime at some — is *undecided*: the effect is neither
    shown at every rate nor shown to change sign with the rate (review 3, H2: counting an undecided arm as
    disagreeing made "rate-dependent" a measure of power)."""
    if len(set(verdicts)) == 1:
        return verdicts[0]
    judged = {v for v in verdicts if v not in ("out of regime", "n/a")}
    if {"reproduced", "contradicted"} <= judged:
        return "rate-dependent"
    if not judged:
        return "out of regime" if "out of regime" in verdicts else "n/a"
    return "undecided"


def _arm_summary(arms: list[tuple[str | None, Verdict]]) -> str:
    """``reproduced at ×4; undecided at ×0.25, ×1``: which arm got which word, in the order the words first occur."""
    by: dict[str, list[str]] = {}
    for a, v in arms:
        by.setdefault(v.verdict, []).append(str(a))
    return "; ".join(f"{w} at {', '.join(a)}" for w, a in by.items())


def _combine(test: DeclaredTest, arms: list[tuple[str | None, Verdict]]) -> Verdict:
    """One verdict of a swept test from its arms (:func:`arm_rule`). A decided word needs every arm decided so and at
    least :data:`MIN_ARMS` arms, checks included; a mixture is *undecided* with the arms' words as its reason
    ("reproduced at ×4 only; …"). The numbers are the first (nominal) arm's; the would-be verdict applies the same
    rule to the arms' would-be (or, where judged, actual) words."""
    if test.sweep is None:
        return arms[0][1]

    words = [v.verdict for _, v in arms]
    verdict = arm_rule(words)
    distinct = {v.reason for _, v in arms}
    if len(distinct) == 1 and arms[0][1].reason:     # one reason at every arm: said once
        reasons = f"at every arm: {arms[0][1].reason}"
    else:
        reasons = "; ".join(f"at {a}: {v.reason}" for a, v in arms if v.reason) or None
    if verdict == "undecided" and len(set(words)) > 1:
        reasons = f"{_arm_summary(arms)}" + (f" ({reasons})" if reasons else "")
    if verdict in DECIDED and len(arms) < MIN_ARMS:
        verdict, reasons = "undecided", (f"{verdict} at {', '.join(str(a) for a, _ in arms)}, but the sweep has "
                                         f"{len(arms)} arm{'s' if len(arms) > 1 else ''}, fewer than {MIN_ARMS}")
    would = None
    if verdict in ("out of regime", "n/a"):
        would = arm_rule([v.would_be or v.verdict for _, v in arms])
    return replace(arms[0][1], verdict=verdict, reason=reasons, arms=tuple(arms), would_be=would)


def _equivalence_p(r: dict, t: DeclaredTest) -> tuple[float, bool]:
    """Two one-sided tests (TOST, Schuirmann 1987) of ``t.threshold − margin < mean < t.threshold + margin`` on a
    :func:`t_test` summary ``r``. Returns ``(p, inside)``: with ``inside`` the larger of the two one-sided p-values
    (small = the mean lies inside the band); otherwise twice the smaller one-sided p that the mean lies beyond a
    bound (small = it lies outside). The side with the smaller p is the one returned."""
    n, m, sd = r["n"], r["mean"], r["sd"]
    nan = float("nan")
    if r["reason"] or n < 2 or not sd > 0:
        return nan, False
    se, df, lo, hi = sd / math.sqrt(n), n - 1, t.threshold - t.margin, t.threshold + t.margin
    p_above_lo = float(stats.t.sf((m - lo) / se, df))        # H0: mean <= lo
    p_below_hi = float(stats.t.cdf((m - hi) / se, df))       # H0: mean >= hi
    p_in = max(p_above_lo, p_below_hi)
    p_out = min(1.0, 2 * min(1 - p_above_lo, 1 - p_below_hi))  # H0: lo <= mean <= hi, against either side
    return (p_in, True) if p_in <= p_out else (p_out, False)


def _decide(t: DeclaredTest, r: dict, p_holm: float, alpha: float, inside: bool) -> str:
    """The verdict word of a judged test from its summary ``r`` and its Holm-adjusted p."""
    if t.form == "equivalence":
        if p_holm < alpha:
            return "reproduced" if inside else "contradicted"
        return "undecided"
    lo, hi = r["ci"]
    if t.margin is not None and not (math.isnan(lo) or math.isnan(hi)) \
            and t.threshold - t.margin < lo and hi < t.threshold + t.margin:
        return "negligible"
    sign = 1 if t.direction == "positive" else -1
    if p_holm < alpha:
        return "reproduced" if (r["mean"] - t.threshold) * sign > 0 else "contradicted"
    return "undecided"


def _equivalence_power(margin: float, sd: float, n: int, alpha: float) -> float:
    """Power of TOST at level ``alpha`` when the true mean is the band's centre: both one-sided t-tests reject,
    ``P(|mean| < margin − t_{1−α} · se)`` with the mean ~ t-scaled (a standard approximation). NaN without spread."""
    if n < 2 or not sd > 0:
        return float("nan")
    se, df = sd / math.sqrt(n), n - 1
    c = float(stats.t.ppf(1 - alpha, df))
    return max(0.0, float(2 * stats.t.cdf(margin / se - c, df) - 1))


def judge(tests: Sequence[DeclaredTest], values: dict, alpha: float = 0.05, *,
          preconditions: Sequence[Precondition] = (), facts: dict | None = None,
          seeds: Sequence[int] | dict[str, Sequence[int]] | None = None) -> list[Verdict]:
    """Verdicts of declared tests (:data:`~vrs_edu.lab.results.VERDICTS`), Holm-corrected within each family.

    ``values[test.name]`` holds the per-seed quantity (``{arm: per-seed}`` for a test declared with a ``sweep``; the
    first arm is the nominal one). ``facts[name]`` is the value of each :class:`~vrs_edu.lab.results.Precondition`
    in ``preconditions`` (a number, or ``{arm: number}``). ``seeds`` (one list for every test, or ``{test name:
    seeds}``) lets a repeated seed count once (:func:`t_test`).

    Order: set-up checks (``kind="check"``) first, then claims, then controls. A test whose ``requires`` name a check
    that is not reproduced or a precondition that fails is *out of regime*; a control whose ``gate`` claim is not
    reproduced is *n/a*; neither is counted in its family's Holm correction, nor is an undecidable test (zero variance,
    fewer than 3 seeds: *undecided* with the reason). The others are decided when their Holm-adjusted p < ``alpha``:
    *reproduced* if the mean lies on the declared side of the threshold, *contradicted* if on the other; else
    *undecided*. A swept test is corrected with its family at every arm and combined by :func:`_combine`.
    Every judged row gets ``power``: the chance the test had to be decided (same n, observed sd, two-sided level
    alpha / family size, Holm's strictest step: a lower bound) if the true effect were the declared
    ``effect_for_power``; NaN (basis "none") when the test declares none. The 95 % interval is the unadjusted one.
    Returns one :class:`~vrs_edu.lab.results.Verdict` per test, in the given order; ``print(row)`` gives its
    sentence (``-0.002 [95% CI -0.018, +0.014], p (Holm) 0.749: undecided (power 93% at -0.027)``).

    Raises:
        ValueError: a test has no values (or values of the wrong shape for its sweep); a family mixes kinds or
            sweeps; an unknown requirement or gate; a precondition without a value; ``seeds`` of the wrong length.
    """
    tests = list(tests)
    pre = {p.name: p for p in preconditions}
    kinds = _check_declarations(tests, pre)
    missing = [t.name for t in tests if t.name not in values]
    if missing:
        raise ValueError(f"no per-seed values for declared tests {missing}")
    needed = [pre[r] for r in dict.fromkeys(r for t in tests for r in t.requires) if r in pre]
    outcomes = check_preconditions(needed, facts or {})
    by_name = {t.name: t for t in tests}

    def arms_of(t: DeclaredTest) -> list:
        v = values[t.name]
        if t.sweep is not None:
            if not isinstance(v, dict) or not v:
                raise ValueError(f"test {t.name!r} is declared over the sweep {t.sweep!r}: its values must be "
                                 f"{{arm: per-seed values}}, got {type(v).__name__}")
            return list(v)
        if isinstance(v, dict):
            raise ValueError(f"test {t.name!r} is not declared over a sweep: its values must be a list, got a dict")
        return [None]

    def seeds_of(t: DeclaredTest):
        return seeds.get(t.name) if isinstance(seeds, dict) else seeds

    per_arm: dict[tuple[str, str | None], Verdict] = {}
    final: dict[str, Verdict] = {}

    def regime(t: DeclaredTest, arm) -> tuple[str | None, dict[str, str]]:
        """Why ``t`` is out of regime at ``arm`` whatever the data say (a required check not reproduced, a
        precondition that gates every reading), and ``{verdict: why}`` for the readings a failing directional
        precondition blocks."""
        fails, blocked = [], {}
        for r in t.requires:
            if r in by_name:
                v = per_arm.get((r, arm), final[r]) if by_name[r].sweep else final[r]
                if v.verdict != "reproduced":
                    fails.append(f"check {r} is {v.verdict}")
            elif not outcomes[r].holds_at(arm):
                p = outcomes[r].precondition
                if p.blocks == GATES["both"]:
                    fails.append(outcomes[r].because(arm, "en"))
                else:
                    for w in p.blocks:
                        blocked[w] = "; ".join(filter(None, (blocked.get(w), outcomes[r].because(arm, "en"))))
        return "; ".join(fails) or None, blocked

    nan = float("nan")
    for stage in ("check", "claim", "control"):
        for fam in [f for f, k in kinds.items() if k == stage]:
            members = [t for t in tests if t.family == fam]
            arms = arms_of(members[0])
            for t in members[1:]:
                if arms_of(t) != arms:
                    raise ValueError(f"family {fam!r}: test {t.name!r} has arms {arms_of(t)}, "
                                     f"{members[0].name!r} has {arms}")
            for arm in arms:
                rows, judged, decidable = {}, [], []
                for t in members:
                    r = t_test(values[t.name][arm] if t.sweep else values[t.name], t.threshold, 1 - alpha,
                               seeds_of(t))
                    inside = False
                    if t.form == "equivalence" and not r["reason"]:
                        r["p"], inside = _equivalence_p(r, t)
                    why, blocked = regime(t, arm)
                    if why:
                        status = ("out of regime", f"precondition not met: {why}")
                    elif t.kind == "control" and final[t.gate].verdict != "reproduced":
                        status = ("n/a", f"{t.gate} is {final[t.gate].verdict}: no gain for the control to explain")
                    elif r["reason"]:
                        status = ("undecided", r["reason"])
                    else:
                        status = None
                        judged.append(t.name)
                    if not r["reason"] and not math.isnan(r["p"]):
                        decidable.append(t.name)
                    rows[t.name] = (r, status, inside, blocked)
                adjusted = dict(zip(judged, holm([rows[n][0]["p"] for n in judged])))
                # As if every precondition held and every gate were open: the would-be verdicts' correction.
                as_if = dict(zip(decidable, holm([rows[n][0]["p"] for n in decidable])))
                m = len(judged)
                for t in members:
                    r, status, inside, blocked = rows[t.name]
                    effect = t.effect_for_power
                    level = alpha / max(m, 1)
                    power = nan
                    if effect is not None and status is None:
                        power = (_equivalence_power(t.margin, r["sd"], r["n"], level) if t.form == "equivalence"
                                 else power_paired_t(effect, r["sd"], r["n"], level))
                    would = None
                    if status is None:
                        ph = adjusted[t.name]
                        verdict, reason = _decide(t, r, ph, alpha, inside), None
                        if verdict in blocked:
                            would, verdict = verdict, "out of regime"
                            reason = f"precondition not met: {blocked[would]} (it guards a {would} reading)"
                    else:
                        ph, (verdict, reason) = nan, status
                        if verdict in ("out of regime", "n/a"):
                            would = (_decide(t, r, as_if[t.name], alpha, inside) if t.name in as_if
                                     else "undecided")
                    per_arm[(t.name, arm)] = Verdict(
                        test=t, values=r["values"], n=r["n"], mean=r["mean"], sd=r["sd"], ci=r["ci"], t=r["t"],
                        p=r["p"], p_holm=ph, family_size=m, verdict=verdict, power=power, power_effect=effect,
                        power_basis="none" if effect is None else "declared", reason=reason, would_be=would)
            for t in members:
                final[t.name] = _combine(t, [(a, per_arm[(t.name, a)]) for a in arms])
    return [final[t.name] for t in tests]


def _power_cell(r: Verdict, digits: int, lang: str) -> str:
    if r.verdict != "undecided" or r.reason:
        return ""
    if r.power_basis == "none":
        return E.NO_EFFECT[lang]
    at = "d = 1" if r.power_basis == "d = 1" else signed(r.power_effect, 0 if abs(r.power_effect) >= 10 else digits)
    return E.power_at('n/a' if math.isnan(r.power) else f'{r.power:.0%}', at, lang)


def format_verdicts(rows: Sequence[Verdict], digits: int = 3, width: int = 100, lang: str | None = None) -> str:
    """A text table of :func:`judge` rows, at most ``width`` characters wide for test names up to 30 characters: one
    block per family (its kind, how many tests its Holm correction counted), then per test its mean [95 % CI], the
    threshold it is tested against, the p-value after Holm, the verdict and, for an undecided test, its power at the
    declared effect ("35% at -0.027"); a test over a sweep gets one line per arm under its combined verdict; the
    reason of an out-of-regime, n/a or undecidable test follows on an indented line. A legend ends the table.
    ``lang``: the edition (None: the running notebook's); columns are aligned by display width (Hangul: 2)."""
    lang = resolve_language(lang)

    def words(v: Verdict) -> str:
        return E.verdict_words(v.verdict, v.would_be, lang)

    def line(label: str, r: Verdict, w_name: int, w_ci: int) -> str:
        ph = "n/a" if math.isnan(r.p_holm) else f"{r.p_holm:.3f}"
        return (f"  {E.pad(label, w_name)}{r.interval(digits):{w_ci}s}{signed(r.test.threshold, 2):>6s}{ph:>7s} "
                f"{E.pad(words(r), w_v)}{_power_cell(r, digits, lang)}").rstrip()

    flat = [v for r in rows for v in ([r] + [a for _, a in (r.arms or ())])]
    head = E.HEAD[lang]
    w_v = max(len("contradicted"), *(E.width(words(v)) for v in flat)) + 1
    w_name = max([E.width(head[0])] + [len(r.test.name) for r in rows]
                 + [E.width(E.arm_label(str(a), lang)) - 1 for r in rows for a, _ in (r.arms or ())]) + 2
    w_ci = max([E.width(head[1])] + [len(v.interval(digits)) for v in flat]) + 1
    head = (f"  {E.pad(head[0], w_name)}{E.pad(head[1], w_ci)}{E.pad(head[2], 6, '>')}{E.pad(head[3], 7, '>')} "
            f"{E.pad(head[4], w_v)}{head[5]}")
    lines = []
    for fam in dict.fromkeys(r.test.family for r in rows):
        members = [r for r in rows if r.test.family == fam]
        m = max(v.family_size for r in members for v in ([r] + [a for _, a in (r.arms or ())]))
        lines += [E.family_line(fam, members[0].test.kind, len(members), m, members[0].test.sweep, lang), head]

        def why(reason: str) -> str:
            return E.fill(E.reason(reason, lang), width, initial_indent=" " * 6, subsequent_indent=" " * 6,
                          break_on_hyphens=False)

        for r in members:
            if r.arms is None:
                lines.append(line(r.test.name, r, w_name, w_ci))
                if r.reason:
                    lines.append(why(r.reason))
                continue
            lines.append(f"  {r.test.name:{w_name}s}{'':{w_ci}s}{'':6s}{'':7s} {words(r)}")
            reasons = {v.reason for _, v in r.arms}
            for a, v in r.arms:
                lines.append(line(E.arm_label(str(a), lang), v, w_name, w_ci))
                if v.reason and len(reasons) > 1:      # each arm its own reason, or one line for them all
                    lines.append(why(v.reason))
            if len(reasons) == 1 and r.arms[0][1].reason:
                lines.append(why(f"at every arm: {r.arms[0][1].reason}"))
            elif r.reason and not any(v.reason for _, v in r.arms):
                lines.append(why(r.reason))
    lines.append(E.fill(E.FOOTNOTE[lang], width))
    return "\n".join(lines)


def verdict_sentence(row: Verdict | dict, digits: int = 3) -> str:
    """One :func:`judge` row in words: ``mean [95% CI lo, hi], p (Holm) p: verdict``, for an undecided test its
    power at the declared effect, for an out-of-regime, n/a or undecidable one its reason, for a swept one a clause
    per arm: :meth:`Verdict.sentence <vrs_edu.lab.results.Verdict.sentence>` (``str(row)`` at 3 digits). A stored
    record (``result["verdicts"]``) is read with :meth:`Verdict.from_record <vrs_edu.lab.results.Verdict.from_record>`."""
    return (row if isinstance(row, Verdict) else Verdict.from_record(row)).sentence(digits)


def format_measured(rows: Sequence[Verdict], setup_checks: Sequence[str] = (),
                    claims_title: str = "published claims", width: int = 100, lang: str | None = None) -> str:
    """A chapter's "What we measured": every :func:`judge` row (verdict, name, claim with its source), then the test
    names by verdict, the published claims and controls apart from the checks on the set-up (``kind="check"``, and
    any names in ``setup_checks``: for records declared before kinds existed). Lines at most ``width`` wide.
    ``lang``: the edition (None: the running notebook's); Korean claims from :mod:`vrs_edu.i18n.declared`."""
    lang = resolve_language(lang)
    said = declared.translations(lang)
    w = max([len("contradicted")] + [E.width(E.measured_verdict(r.verdict, lang)) for r in rows])
    lines = [E.fill(f"{E.pad(E.measured_verdict(r.verdict, lang), w)} {r.test.name} — "
                    f"{said.get(r.test.claim, r.test.claim)}{E.would_be(r.would_be, lang)}", width,
                    subsequent_indent=" " * (w + 1), break_on_hyphens=False) for r in rows]

    def is_check(r: Verdict) -> bool:
        return r.test.kind == "check" or r.test.name in setup_checks

    for title, check in ((claims_title, False), ("checks on the set-up", True)):
        lines.append("\n" + E.measured_title(title, lang))
        for v in VERDICTS:
            names = [r.test.name for r in rows if r.verdict == v and is_check(r) == check]
            if names or v in ("reproduced", "contradicted", "undecided", "negligible"):
                lines.append(E.fill(E.measured_count(v, names, lang), width, initial_indent="  ",
                                    subsequent_indent="    "))
    return "\n".join(lines)


def precondition_lines(outcomes: dict[str, PreconditionOutcome] | Sequence[PreconditionOutcome],
                       width: int = 100, lang: str | None = None) -> str:
    """One line per precondition outcome: name, value, the side it needs, holds/fails, and the premise it stands
    for (in brackets, so that a failed one does not read as if its premise were a fact). ``lang``: the edition
    (None: the running notebook's); Korean premises from :mod:`vrs_edu.i18n.declared`."""
    lang = resolve_language(lang)
    said = declared.translations(lang)
    items = outcomes.values() if isinstance(outcomes, dict) else outcomes
    return "\n".join(E.fill(E.stands_for(o.because(lang=lang), said.get(o.precondition.premise, o.precondition.premise),
                                         lang), width, subsequent_indent="    ", break_on_hyphens=False) for o in items)


def plateau(steps: Sequence[float], values: Sequence[float], window: tuple[float, float],
            tol: float = 0.1) -> dict:
    """Has a coefficient trajectory stopped moving? Compares the change inside ``window`` = (start, end) steps
    (interpolated on the logged curve) with the whole change from the first logged value to ``end``.

    Returns ``{"window_change", "total_change", "ratio", "reached"}`` with ``reached = |window change| ≤ tol ·
    |total change|``. Recipes pass the quarter of the run before the LR decay starts, so that the decay cannot produce
    a plateau by itself. Raises ValueError on a window outside the logged steps or with start ≥ end.
    """
    xs, ys = _check_curve(steps, values)
    a, b = float(window[0]), float(window[1])
    if not xs[0] <= a < b <= xs[-1]:
        raise ValueError(f"window must satisfy {xs[0]} <= start < end <= {xs[-1]}, got {window}")
    end = interpolate(xs, ys, b)
    win = end - interpolate(xs, ys, a)
    total = end - ys[0]
    ratio = abs(win) / abs(total) if total else float("inf") if win else 0.0
    return {"window_change": win, "total_change": total, "ratio": ratio, "reached": ratio <= tol}


def plateau_window(eval_steps: Sequence[int], n_steps: int, decay_frac: float = 0.3) -> tuple[float, float]:
    """The steps (start, end) over which a coefficient's plateau is judged: a quarter of the run, ending where the
    learning-rate decay starts (``decay_frac`` of the steps before the end; 1,200 steps → (540, 840), 240 → (108,
    168)), so that the decay, which slows every update, cannot make a plateau by itself. ``eval_steps``: where the
    trajectory was logged (step 0, the initial value, counts as logged). A schedule with no constant phase before
    its last log gets the last logged interval."""
    xs = [0, *eval_steps] if eval_steps[0] > 0 else list(eval_steps)
    decay_start = int(n_steps * (1 - decay_frac))
    window = (max(xs[0], decay_start - n_steps / 4), min(decay_start, xs[-1]))
    return window if window[0] < window[1] else (xs[-2], xs[-1])


def trajectory_plateaus(runs: Sequence[dict], names, start: float, tol: float = 0.1,
                        decay_frac: float = 0.3) -> dict:
    """Did the logged coefficients stop moving before the LR decay? For every run and every coefficient name that
    ``names(run)`` lists, :func:`plateau` on its trajectory from its initial value ``start`` (at step 0) over
    :func:`plateau_window`. Returns ``{"reached", "of", "fraction", "tol", "per_run": [[ratio per name] per run]}``
    (runs in seed order). Raises ValueError when no trajectory is found."""
    per_run, reached, total = [], 0, 0
    for r in sorted(runs, key=lambda r: r["seed"]):
        h = r["history"]
        steps = h["eval_steps"]
        window = plateau_window(steps, h["steps"][-1] + 1, decay_frac)
        ratios = []
        for name in names(r):
            xs, ys = ([0, *steps], [start, *h["coefficients"][name]]) if steps[0] > 0 else (steps,
                                                                                              h["coefficients"][name])
            p = plateau(xs, ys, window, tol)
            ratios.append(p["ratio"])
            reached += p["reached"]
            total += 1
        per_run.append(ratios)
    if total == 0:
        raise ValueError("no coefficient trajectory to judge")
    return {"reached": reached, "of": total, "fraction": reached / total, "tol": tol, "per_run": per_run}


def per_seed(runs: Sequence[dict], value=lambda r: r["final_val_loss"]) -> dict[int, float]:
    """``{seed: value(run)}`` for a list of runs (as written by ``compare_variants``)."""
    return {r["seed"]: float(value(r)) for r in runs}


def paired_values(variant: Sequence[dict], baseline: Sequence[dict], value=lambda r: r["final_val_loss"]
                  ) -> list[float]:
    """Per-seed ``value(variant run) − value(baseline run)`` over the seeds both have, in seed order.
    Raises ValueError when they share no seed."""
    a, b = per_seed(variant, value), per_seed(baseline, value)
    common = sorted(set(a) & set(b))
    if not common:
        raise ValueError(f"the two run lists share no seed ({sorted(a)} vs {sorted(b)})")
    return [a[s] - b[s] for s in common]


def verdict_records(rows: Sequence[Verdict]) -> list[dict]:
    """:func:`judge` rows as plain JSON-ready dicts (the declaration's fields, then the numbers and the verdict):
    what a recipe stores under ``result["verdicts"]`` (:meth:`Verdict.to_record
    <vrs_edu.lab.results.Verdict.to_record>`; :meth:`~vrs_edu.lab.results.Verdict.from_record` reads one back)."""
    return [r.to_record() for r in rows]
