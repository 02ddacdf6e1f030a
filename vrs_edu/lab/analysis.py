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
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from scipy import stats

# The typed results, importable from here too (one import for a chapter or a recipe).
from .results import Comparison, DeclaredTest, PairedDiff, Verdict, interval, signed, t_statistic  # noqa: F401


def _floats(values, name: str) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise ValueError(f"{name} is empty: need at least one number")
    return out


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; ``nan`` for a single value). Raises ValueError when empty."""
    xs = _floats(values, "values")
    m = sum(xs) / len(xs)
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


def paired_difference(variant: Sequence[float], baseline: Sequence[float], level: float = 0.95) -> PairedDiff:
    """Per-seed differences ``variant[i] − baseline[i]`` and their summary.

    Returns a :class:`~vrs_edu.lab.results.PairedDiff` (diffs, mean, sd, n, ci = (low, high), t, n_negative); the CI
    is the Student-t interval ``mean ± t_crit · sd / sqrt(n)`` (``nan`` bounds when n = 1). For losses, negative =
    the variant is better. ``print`` gives e.g. ``+0.006 [-0.020, +0.032], 2/5 seeds below 0``.

    Raises:
        ValueError: the two lists differ in length or are empty.
    """
    a, b = _floats(variant, "variant"), _floats(baseline, "baseline")
    if len(a) != len(b):
        raise ValueError(f"variant and baseline must have one value per seed each, got {len(a)} and {len(b)}")
    d = [x - y for x, y in zip(a, b)]
    s = t_test(d, 0.0, level)   # the mean of the differences against 0: the same interval and t as every test
    return PairedDiff(d, s["mean"], s["sd"], s["n"], s["ci"], s["t"], sum(x < 0 for x in d))


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


def verdict(reproduced: bool) -> str:
    """The word a chapter prints for a computed test."""
    return "reproduced" if reproduced else "not reproduced"


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


def format_comparison(comparison: dict[str, Comparison], digits: int = 3, accuracy: bool = False) -> str:
    """Two text tables of a :func:`compare_to_baseline` result: final loss per variant (mean ± sd across seeds; with
    ``accuracy``, also the final answer accuracy, mean ± sd) with the paired difference to the baseline and its
    95 % CI; then the difference before the LR decay, at equal wall
    time, and the sample-efficiency ratio (mean ± sd over the seeds that reached the baseline's final loss)."""
    lines = [f"{'variant':13s}{'final val loss':>17s}" + (f"{'accuracy':>18s}" if accuracy else "")
             + f"{'Δ vs baseline [95% CI]':>30s}{'seeds below 0':>15s}"]
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
    lines.append(f"{'variant':13s}{'Δ before decay [95% CI]':>34s}{'Δ at equal time':>17s}{'sample efficiency':>20s}")
    for name, c in comparison.items():
        if c.is_baseline:
            continue
        mid = f"step {c.before_decay_step}: {c.paired_before_decay.interval(digits)}"
        et = signed(c.equal_time["paired"].mean, digits) if c.equal_time is not None else "n/a"
        se = c.sample_efficiency
        eff = (f"{se['mean']:.2f} ± {0.0 if math.isnan(se['sd']) else se['sd']:.2f} ({se['n_reached']}/"
               f"{len(se['per_seed'])})" if se["n_reached"] else f"not reached (0/{len(se['per_seed'])})")
        lines.append(f"{name:13s}{mid:>34s}{et:>17s}{eff:>20s}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# Pre-declared tests and their three-way verdicts
#
# A recipe declares its tests (``DeclaredTest``) in code *before* the full run; git history shows the order. A test
# compares one per-seed quantity with a threshold: ``reproduced`` when the evidence puts it on the published side,
# ``contradicted`` when it puts it on the opposite side, ``undecided`` otherwise, reported with the power the test
# had. Tests are grouped in families; within a family the p-values are Holm-corrected (Holm 1979, step-down), so a
# chapter's many secondary tests cannot produce a "finding" by sheer number. The primary tests form their own family.
# The declaration (DeclaredTest) and the judged test (Verdict) are typed results, in results.py.

VERDICTS = ("reproduced", "contradicted", "undecided")


def t_test(values: Sequence[float], threshold: float = 0.0, level: float = 0.95) -> dict:
    """One-sample Student-t summary of per-seed ``values`` against ``threshold``: ``{"values", "n", "mean", "sd",
    "ci", "t", "p"}`` with the two-sided ``level`` interval of the mean and the two-sided p-value (SciPy). With n < 2
    the interval, t and p are NaN. Raises ValueError when ``values`` is empty."""
    xs = _floats(values, "values")
    m, sd = mean_sd(xs)
    n = len(xs)
    if n < 2:
        nan = float("nan")
        return {"values": xs, "n": n, "mean": m, "sd": sd, "ci": (nan, nan), "t": nan, "p": nan}
    half = t_critical(n - 1, level) * (sd / math.sqrt(n))
    t = t_statistic(m, sd, n, threshold)
    if math.isfinite(t):
        p = float(2 * stats.t.sf(abs(t), n - 1))
    else:   # sd = 0: every seed gave the same value, on the threshold (p 1) or off it (p 0)
        p = 0.0 if m != threshold else 1.0
    return {"values": xs, "n": n, "mean": m, "sd": sd, "ci": (m - half, m + half), "t": t, "p": p}


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


def judge(tests: Sequence[DeclaredTest], values: dict[str, Sequence[float]], alpha: float = 0.05) -> list[Verdict]:
    """Three-way verdicts of declared tests, Holm-corrected within each family.

    ``values[test.name]`` holds the per-seed quantity. A test is decided when its Holm-adjusted p < ``alpha``: then
    *reproduced* if the mean lies on the declared side of the threshold, *contradicted* if on the other. Otherwise
    *undecided*. Every row gets ``power``: the chance the test had to be decided (same n, observed sd, two-sided
    level alpha / family size — the level of Holm's first, strictest step, so a lower bound) if the true effect were
    ``effect_for_power`` (``power_basis`` "published") or one observed seed sd (d = 1, ``power_basis`` "d = 1");
    ``power_effect`` is that effect in the quantity's units, signed in the declared direction.
    The 95 % interval printed is the unadjusted one. Returns one :class:`~vrs_edu.lab.results.Verdict` per test, in
    the given order; ``print(row)`` gives its sentence (``-0.002 [95% CI -0.018, +0.014], p (Holm) 0.749: ...``).

    Raises:
        ValueError: a test has no values.
    """
    missing = [t.name for t in tests if t.name not in values]
    if missing:
        raise ValueError(f"no per-seed values for declared tests {missing}")
    summaries = [t_test(values[t.name], t.threshold, 1 - alpha) for t in tests]
    p_holm, family_size = [float("nan")] * len(tests), [0] * len(tests)
    for fam in {t.family for t in tests}:
        members = [i for i, t in enumerate(tests) if t.family == fam]
        for i, adj in zip(members, holm([summaries[i]["p"] for i in members])):
            p_holm[i], family_size[i] = adj, len(members)
    rows = []
    for t, r, ph, m in zip(tests, summaries, p_holm, family_size):
        decided = not math.isnan(ph) and ph < alpha
        sign = 1 if t.direction == "positive" else -1
        published = t.effect_for_power is not None
        effect = t.effect_for_power if published else r["sd"] * sign
        rows.append(Verdict(
            test=t, values=r["values"], n=r["n"], mean=r["mean"], sd=r["sd"], ci=r["ci"], t=r["t"], p=r["p"],
            p_holm=ph, family_size=m,
            verdict=("reproduced" if (r["mean"] - t.threshold) * sign > 0 else "contradicted") if decided
            else "undecided",
            power=power_paired_t(effect, r["sd"], r["n"], alpha / m), power_effect=effect,
            power_basis="published" if published else "d = 1"))
    return rows


def format_verdicts(rows: Sequence[Verdict], digits: int = 3) -> str:
    """A text table of :func:`judge` rows, at most 100 characters wide for test names up to 30 characters: one
    block per family (its size and whether it is Holm-corrected), then per test its mean [95 % CI], the threshold it
    is tested against, the p-value after Holm, the verdict and, for an undecided test, its power (see :func:`judge`):
    "95% at -0.027" = power to detect the published effect -0.027, "8% at d = 1" = power to detect an effect of one
    seed sd. A legend line at the end says so."""
    cis = [r.interval(digits) for r in rows]
    w_name = max([len("test")] + [len(r.test.name) for r in rows]) + 2
    w_ci = max([len("mean [95% CI]")] + [len(c) for c in cis]) + 1
    head = f"  {'test':{w_name}s}{'mean [95% CI]':{w_ci}s}{'vs':>6s}{'p Holm':>8s}  {'verdict':13s}power"
    lines = []
    families = list(dict.fromkeys(r.test.family for r in rows))
    for fam in families:
        members = [(r, c) for r, c in zip(rows, cis) if r.test.family == fam]
        m = members[0][0].family_size
        lines.append(f"{fam}: {m} test{'s' if m > 1 else ''}"
                     + (", Holm-corrected together" if m > 1 else ", no correction needed"))
        lines.append(head)
        for r, ci in members:
            t = r.test
            ph = "n/a" if math.isnan(r.p_holm) else f"{r.p_holm:.3f}"
            pw = ""
            if r.verdict == "undecided":
                pw = "n/a" if math.isnan(r.power) else f"{r.power:.0%}"
                pw += f" at {signed(r.power_effect, digits)}" if r.power_basis == "published" else " at d = 1"
            lines.append(f"  {t.name:{w_name}s}{ci:{w_ci}s}{signed(t.threshold, 2):>6s}{ph:>8s}  "
                         f"{r.verdict:13s}{pw}".rstrip())
    lines.append("power (undecided tests): the chance to decide, with these seeds at the family's strictest Holm"
                 "\nlevel, if the true effect were the published one ('at' a number) or one seed sd ('at d = 1')")
    return "\n".join(lines)


def verdict_sentence(row: Verdict | dict, digits: int = 3) -> str:
    """One :func:`judge` row in words: ``mean [95% CI lo, hi], p (Holm) p: verdict``, and for an undecided test its
    power ("at -0.027": the published effect; "at d = 1": one seed sd), as the chapters print it:
    :meth:`Verdict.sentence <vrs_edu.lab.results.Verdict.sentence>` (``str(row)`` at 3 digits). A stored record
    (``result["verdicts"]``) is read with :meth:`Verdict.from_record <vrs_edu.lab.results.Verdict.from_record>`."""
    return (row if isinstance(row, Verdict) else Verdict.from_record(row)).sentence(digits)


def format_measured(rows: Sequence[Verdict], setup_checks: Sequence[str], claims_title: str = "published claims",
                    width: int = 100) -> str:
    """A chapter's "What we measured": every :func:`judge` row (verdict, name, claim with its source), then the test
    names by verdict, the published claims apart from the checks on the set-up (``setup_checks``: names of tests
    that check a premise of the experiment rather than a published claim). Lines at most ``width`` wide."""
    lines = [textwrap.fill(f"{r.verdict.upper():12s} {r.test.name} — {r.test.claim}", width,
                           subsequent_indent=" " * 13, break_on_hyphens=False) for r in rows]
    for title, is_check in ((claims_title, False), ("checks on the set-up", True)):
        lines.append(f"\n{title}, at this scale:")
        for v in VERDICTS:
            names = [r.test.name for r in rows if r.verdict == v and (r.test.name in setup_checks) == is_check]
            lines.append(textwrap.fill(f"{v} ({len(names)}): {', '.join(names) or 'none'}", width,
                                       initial_indent="  ", subsequent_indent="    "))
    return "\n".join(lines)


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
