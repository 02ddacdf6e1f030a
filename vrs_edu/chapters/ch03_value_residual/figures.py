"""Chapter 03's plots and widget: loss curves with seed bands, paired differences, per-layer metrics, learned λ, and
the λ1/λ2 inference widget — a thin ``ipywidgets.interactive`` over
:func:`vrs_edu.chapters.ch03_value_residual.readout.lambda_readout` (a plain function, tested without a browser).

Every plot takes the numbers a recipe saved (``load_results("value-residual")``) and returns the Figure.
"""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from vrs_edu.chapters.ch03_value_residual import depth_sweep as ds
from vrs_edu.chapters.ch03_value_residual.readout import lambda_readout, trained_lambdas
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.analysis import band, t_test
from vrs_edu.nn.model import TinyGPT
from vrs_edu.viz.controls import change_from_default, label_style
from vrs_edu.viz.prose import say

COLORS = {"baseline": "black", "resformer": "C0", "learnable": "C1", "svformer": "C2", "neutreno": "C3",
          "baseline_raw": "0.55", "resformer_raw": "C9",      # the weak-baseline pair: its own colours
          "qkv": "C0", "shared": "C1", "substitute_v": "C2", "bank": "C3"}
PART_TITLES = {"corpus": "Python docs, word tokens", "recall": "associative recall (answers only)"}
CORPUS_TITLES = {"pydoc_data.topics": "Python docs, word tokens", "kjv": "King James Bible, word tokens"}


PART_TITLES_KO = {"corpus": "Python 문서, 단어 토큰", "recall": "연관 회상 (답만)"}
CORPUS_TITLES_KO = {"pydoc_data.topics": "Python 문서, 단어 토큰", "kjv": "King James Bible, 단어 토큰"}


def _title(name: str, part: dict, lang: str | None = None) -> str:
    """A panel's title: the corpus the part trained on (its ``corpus`` record), else the part's name; in ``lang``
    (None: the running edition)."""
    corpus = part.get("corpus") if isinstance(part.get("corpus"), str) else None
    if resolve_language(lang) == "ko":
        return (CORPUS_TITLES_KO.get(corpus, f"{corpus}, 단어 토큰") if corpus
                else PART_TITLES_KO.get(name, name))
    return CORPUS_TITLES.get(corpus, f"{corpus}, word tokens") if corpus else PART_TITLES.get(name, name)


# ---------------------------------------------------------------------------------------------------------------
# The widget: λ1 / λ2 of a trained value-residual model changed at inference (the numbers: lab).


def lambda_figure(model: TinyGPT, batches, lambda_1: float = 0.0, lambda_2: float = 1.0,
                  trained: dict | None = None, lang: str | None = None):
    """The widget's figure. Left: per-layer attention entropy at the chosen λ1, λ2 minus the trained setting's
    (the trained line is 0; the changes are small, a few hundredths of a nat, so absolute curves would sit on top
    of each other). Right: the (λ1, λ2) plane with the trained setting (grey) and this setting (red), each with
    its loss. Returns ``(fig, readout, trained_readout)``. ``lang``: the labels' language (None: the running
    edition)."""
    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    batches = list(batches)
    t1, t2 = trained_lambdas(model)
    trained = trained or lambda_readout(model, batches, t1, t2)
    now = lambda_readout(model, batches, lambda_1, lambda_2)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 3.6), gridspec_kw={"width_ratios": [1.6, 1]})
    layers = range(model.cfg.n_layers)
    ax.plot(layers, [0.0] * len(layers), marker="o", color="gray",
            label=t(f"as trained (loss {trained['loss']:.3f})", f"학습된 설정 (손실 {trained['loss']:.3f})"))
    ax.plot(layers, [a - b for a, b in zip(now["entropy"], trained["entropy"])], marker="o", color="C0",
            label=t(f"λ1={lambda_1:.2f}, λ2={lambda_2:.2f} (loss {now['loss']:.3f})",
                    f"λ1={lambda_1:.2f}, λ2={lambda_2:.2f} (손실 {now['loss']:.3f})"))
    ax.set_xlabel(t("block", "블록"))
    ax.set_ylabel(t("Δ attention entropy (nats)", "Δ 어텐션 엔트로피 (nats)"))
    # a fixed range, widened only when a change exceeds it: auto-scaling made ±0.007-nat changes fill the panel
    largest = max(abs(a - b) for a, b in zip(now["entropy"], trained["entropy"]))
    span = max(ENTROPY_SPAN, 1.1 * largest)
    ax.set_ylim(-span, span)
    ax.set_title(t(f"entropy per layer − the trained setting's (largest change {largest:.3f} nats)",
                   f"층별 엔트로피 − 학습된 설정의 값 (최대 변화 {largest:.3f} nats)"))
    ax.legend()
    ax2.scatter([t1], [t2], s=90, color="0.5", zorder=3,
                label=t(f"trained: {trained['loss']:.3f}", f"학습된 설정: {trained['loss']:.3f}"))
    ax2.scatter([lambda_1], [lambda_2], s=60, color="red", zorder=4,
                label=t(f"this setting: {now['loss']:.3f}", f"이 설정: {now['loss']:.3f}"))
    ax2.set_xlim(-0.05, 1.55)
    ax2.set_ylim(-0.05, 1.55)
    ax2.set_xlabel(t("λ1 (weight on V_1)", "λ1 (V_1의 가중치)"))
    ax2.set_ylabel(t("λ2 (weight on V_n)", "λ2 (V_n의 가중치)"))
    ax2.set_title(t(f"loss {now['loss']:.3f} nats ({now['loss'] - trained['loss']:+.3f} vs trained)",
                    f"손실 {now['loss']:.3f} nats (학습된 설정 대비 {now['loss'] - trained['loss']:+.3f})"))
    ax2.legend(title=t("loss (nats)", "손실 (nats)"))
    fig.tight_layout()
    return fig, now, trained


#: the left panel's fixed half-range (nats): an honest scale for entropy changes, against ~2-3 nats of entropy
ENTROPY_SPAN = 0.1

# The widget opens at λ1 = 0, λ2 = 1 (V_1 removed, the layer's own values at full weight): at the trained setting
# the left panel is a change from itself, a flat line at 0, and would show the learner nothing.
DEFAULT_LAMBDAS = (0.0, 1.0)


def lambda_text(now: dict, trained_loss: float, lang: str | None = None) -> str:
    """The λ widget's printed readout: the loss with its change from the trained model's (the sliders' default)
    and the entropy per layer, in ``lang`` (None: the running edition). ``now``: :func:`lambda_readout`'s dict."""
    change = change_from_default(now["loss"], trained_loss, ".3f", " nats", lang)
    entropy = " ".join(f"{e:.2f}" for e in now["entropy"])
    return in_language(f"loss {change}; entropy per layer: {entropy}", f"손실 {change}; 층별 엔트로피: {entropy}",
                       lang)


def lambda_widget(model: TinyGPT, batches, lambda_1: float = DEFAULT_LAMBDAS[0],
                  lambda_2: float = DEFAULT_LAMBDAS[1]):
    """λ1 / λ2 sliders over a trained value-residual model: loss and per-layer entropy update on every move. The
    sliders open at ``(lambda_1, lambda_2)`` (default :data:`DEFAULT_LAMBDAS`, V_1 removed)."""
    batches = list(batches)
    trained = lambda_readout(model, batches, *trained_lambdas(model))

    def show(lambda_1=lambda_1, lambda_2=lambda_2):
        fig, now, _ = lambda_figure(model, batches, lambda_1, lambda_2, trained)
        plt.show()
        say(lambda_text(now, trained["loss"]))
        return now

    # Step 0.25 from the measured sensitivity of chapter 03's checkpoint (2 validation batches): one step of 0.05
    # or 0.10 from the trained 0.5/0.5 moved the loss by ≤ 0.0015 nats (the "4.865 stays 4.865"); one
    # step of 0.25 moves it by 0.006–0.033 nats (re-measured on the strong-baseline checkpoint of 2026-11-30:
    # λ1 0.75: +0.033, λ1 0.25: +0.033, λ2 0.75: +0.006, λ2 0.25: +0.033; λ1 0.45: +0.0003).
    slider = dict(min=0.0, max=1.5, step=0.25, readout_format=".2f", continuous_update=False, style=label_style())
    return W.interactive(show, lambda_1=W.FloatSlider(value=lambda_1, description="λ1 (V_1)", **slider),
                         lambda_2=W.FloatSlider(value=lambda_2, description="λ2 (V_n)", **slider))


# ---------------------------------------------------------------------------------------------------------------
# Plots of saved results.


def _variants(part: dict, variants):
    return [v for v in (variants or part["runs"]) if v in part["runs"]]


def _parts(result: dict, parts) -> tuple[str, ...]:
    return tuple(parts) if parts is not None else tuple(p for p in ("corpus", "recall") if p in result)


def plot_loss_gains(rows: list[dict], paper: float | None = None, title: str = "", lang: str | None = None):
    """Chapter 03's first figure: each variant's final validation loss − the baseline's (nats, paired by seed), its
    mean and 95 % interval, one row per variant in its colour; below 0 = a lower loss. ``rows``: dicts with
    ``name``, ``mean``, ``ci`` ((low, high)) and, optionally, ``margin``: the declared smallest effect of the row's
    test (nats), drawn as a grey band ±margin behind the row, inside which a whole interval reads *negligible*.
    ``paper``: a published gain (nats) drawn as a dotted line, kept inside the axes. Raises ValueError on an empty
    list. ``lang``: the labels' language (None: the running edition)."""
    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    if not rows:
        raise ValueError("rows: expected at least one {'name', 'mean', 'ci'} row, got none")
    fig, ax = plt.subplots(figsize=(8.0, 0.5 * len(rows) + 1.8))
    banded = False
    for y, r in enumerate(rows):
        m = r.get("margin")
        if m:
            ax.fill_betweenx([y - 0.3, y + 0.3], -abs(m), abs(m), color="0.88", zorder=0,
                             label=None if banded else t("± its declared smallest effect (inside: negligible)",
                                                       "± 선언된 관심 최소 효과 (안쪽: 무시할 만함)"))
            banded = True
        lo, hi = r["ci"]
        ax.errorbar(r["mean"], y, xerr=[[r["mean"] - lo], [hi - r["mean"]]], fmt="o", ms=7, capsize=4,
                    color=COLORS.get(r["name"], "C7"))
    ax.axvline(0.0, color="black", lw=1, label=t("the baseline (0)", "기준선 (0)"))
    if paper is not None:
        ax.axvline(paper, color="C3", lw=1.2, ls=":",
                   label=t(f"paper (82 M): {paper:+.3f}", f"논문 (82 M): {paper:+.3f}"))
    bands = [abs(r["margin"]) for r in rows if r.get("margin")]
    lo = min([r["ci"][0] for r in rows] + [0.0] + ([paper] if paper is not None else []) + [-b for b in bands])
    hi = max([r["ci"][1] for r in rows] + [0.0] + ([paper] if paper is not None else []) + bands)
    pad = 0.08 * (hi - lo or 1.0)                # the paper's line and the baseline's stay off the frame
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_yticks(range(len(rows)), [r["name"] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -1.4)          # the first row on top, a free band above it for the legend
    ax.set(xlabel=t("final validation loss − the baseline's (nats; < 0: better)",
                    "최종 검증 손실 − 기준선의 값 (nats; < 0: 더 좋음)"), title=title)
    ax.legend(loc="upper center", ncol=2)
    fig.tight_layout()
    return fig


def plot_loss_curves(result: dict, variants=None, parts=None, lang: str | None = None):
    """Validation loss against step, mean ± sd across seeds (the band), one panel per data set. A part with a
    ``no_lookup_reference`` (the recall task) also shows that strategy's loss as a dashed line. ``parts``: the data
    sets to draw (None: ``corpus`` and ``recall``, those the result has). Labels in ``lang`` (None: the running
    edition)."""
    parts = _parts(result, parts)
    fig, axes = plt.subplots(1, len(parts), figsize=(5.2 * len(parts), 3.4), squeeze=False)
    for ax, p in zip(axes[0], parts):
        part = result[p]
        for v in _variants(part, variants):
            runs = part["runs"][v]
            steps = runs[0]["history"]["eval_steps"]
            m, s = band([r["history"]["val_loss"] for r in runs])
            ax.plot(steps, m, color=COLORS.get(v), label=v, lw=1.4)
            ax.fill_between(steps, [a - b for a, b in zip(m, s)], [a + b for a, b in zip(m, s)],
                            color=COLORS.get(v), alpha=0.15)
        ax.set_title(_title(p, part, lang))
        ax.set_xlabel(in_language("step", "스텝", lang))
        ax.set_ylabel(in_language("validation loss (nats)", "검증 손실 (nats)", lang))
        lo = min(min(band([r["history"]["val_loss"] for r in part["runs"][v]])[0]) for v in _variants(part, variants))
        if "no_lookup_reference" in part:
            ref = part["no_lookup_reference"]["loss"]
            ax.axhline(ref, color="black", lw=0.8, ls="--",
                       label=in_language("no-lookup reference", "조회 없는 기준값", lang))
            ax.legend()
            lo = min(lo, ref)
        start = [band([r["history"]["val_loss"] for r in part["runs"][v]])[0] for v in _variants(part, variants)]
        top = lo + 0.6 * (max(c[len(c) // 4] for c in start) - lo) + 0.1
        if "no_lookup_reference" in part:   # the dashed line the chapter's text names stays inside the axes
            top = max(top, part["no_lookup_reference"]["loss"] + 0.15)
        ax.set_ylim(lo - 0.05, top)
    axes[0][0].legend()
    fig.tight_layout()
    return fig


def plot_paired_curves(result: dict, variants=None, parts=None, lang: str | None = None):
    """Paired difference variant − baseline of the validation loss at every evaluation step: mean across seeds and
    its 95 % confidence band. Below 0 = the variant is ahead at that step. ``parts`` as in :func:`plot_loss_curves`.
    Labels in ``lang`` (None: the running edition)."""
    parts = _parts(result, parts)
    fig, axes = plt.subplots(1, len(parts), figsize=(5.2 * len(parts), 3.4), squeeze=False)
    for ax, p in zip(axes[0], parts):
        comp = result[p]["comparison"]
        for v in [v for v in (variants or comp) if v in comp and v != "baseline"]:
            c = comp[v]["paired_curve"]
            ax.plot(c["steps"], c["mean"], color=COLORS.get(v), label=v, lw=1.4)
            ax.fill_between(c["steps"], c["ci_low"], c["ci_high"], color=COLORS.get(v), alpha=0.15)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_title(_title(p, result[p], lang))
        ax.set_xlabel(in_language("step", "스텝", lang))
        ax.set_ylabel(in_language("Δ val loss vs baseline (nats)", "기준선 대비 Δ 검증 손실 (nats)", lang))
    axes[0][0].legend()
    fig.tight_layout()
    return fig


METRIC_LABELS_KO = {"entropy": "어텐션 엔트로피 (nats)", "sink_mass": "위치 0이 받는 어텐션",
                    "sink_value_norm": "‖v₀‖ / 평균 ‖v‖ (< 1: 싱크가 내용을 거의 싣지 않음)", "oversmoothing": "평균 코사인 유사도"}
METRIC_LABELS = {"entropy": "attention entropy (nats)", "sink_mass": "attention on position 0",
                 "sink_value_norm": "‖v₀‖ / mean ‖v‖ (drain < 1)", "oversmoothing": "mean cosine similarity"}


def plot_layer_metrics(part: dict, variants=("baseline", "resformer"), title: str = "",
                       entropy_reference: float | None = None, lang: str | None = None):
    """Per-layer metrics (entropy, sink mass, sink value norm, over-smoothing), mean ± sd across seeds. With
    ``entropy_reference`` (e.g. :func:`vrs_edu.lab.metrics.uniform_causal_entropy` at the runs' T), the entropy
    panel draws it as a dashed line: below it = concentrated attention. ``lang``: the labels' language."""
    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    fig, axes = plt.subplots(2, 2, figsize=(10, 5.6))      # 2 × 2, not 1 × 4: the page is 12 inches wide at most
    axes = list(axes.flat)
    for ax, (metric, label) in zip(axes, METRIC_LABELS.items()):
        for v in _variants(part, variants):
            m, s = band([r["layer_metrics"][metric] for r in part["runs"][v]])
            xs = range(len(m))
            ax.errorbar(xs, m, yerr=s, marker="o", ms=3, capsize=2, color=COLORS.get(v),
                        label=t(v, "기준선") if v == "baseline" else v)
        if metric == "entropy" and entropy_reference is not None:
            ax.axhline(entropy_reference, color="black", lw=0.8, ls="--", label=t("uniform causal", "균등 인과"))
        ax.set_xlabel(t("block", "블록") if metric != "oversmoothing" else t("depth (0 = embedding)", "깊이 (0 = 임베딩)"))
        ax.set_title(t(label, METRIC_LABELS_KO[metric]))
    handles, labels = axes[0].get_legend_handles_labels()
    # one legend under the panels: inside a panel it covered the entropy curves
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def plot_lambdas(part: dict, name: str = "learnable", lang: str | None = None):
    """Learned λ1 (on V_1) and λ2 (on V_n) per layer, one marker per seed, and their trajectories during training
    (mean across seeds, one line per layer, darker = deeper). ``lang``: the labels' language."""
    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    runs = part["runs"][name]
    keys = sorted({k for k in runs[0]["coefficients"] if k.endswith("value_residual.lambda_1")},
                  key=lambda k: int(k.split(".")[1]))
    layers = [int(k.split(".")[1]) for k in keys]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for lam, color, marker in (("lambda_1", "C0", "o"), ("lambda_2", "C1", "s")):
        for i, r in enumerate(runs):
            ys = [r["coefficients"][f"blocks.{l}.value_residual.{lam}"] for l in layers]
            axes[0].plot(layers, ys, marker=marker, color=color, alpha=0.6, lw=0.8,
                         label=f"{'λ1 (V_1)' if lam == 'lambda_1' else 'λ2 (V_n)'}" if i == 0 else None)
    axes[0].axhline(0.5, color="gray", lw=0.8, ls=":")
    axes[0].set_xlabel(t("block (blocks.0 computes V_1)", "블록 (blocks.0이 V_1을 계산)"))
    axes[0].set_ylabel(t("learned value", "학습된 값"))
    axes[0].set_title(t("final λ per layer (one line per seed)", "층별 최종 λ (시드마다 선 하나)"))
    axes[0].legend()
    steps = runs[0]["history"]["eval_steps"]
    cmap = plt.get_cmap("viridis")
    for j, l in enumerate(layers):
        traj = band([r["history"]["coefficients"][f"blocks.{l}.value_residual.lambda_1"] for r in runs])[0]
        axes[1].plot(steps, traj, color=cmap(j / max(1, len(layers) - 1)), label=t(f"block {l}", f"블록 {l}"))
    axes[1].set_xlabel(t("step", "스텝"))
    axes[1].set_ylabel(t("λ1 (mean across seeds)", "λ1 (시드 평균)"))
    axes[1].set_title(t("λ1 during training", "학습 중의 λ1"))
    axes[1].legend(ncol=2)
    fig.tight_layout()
    return fig


def plot_depth_sweep(part: dict, lang: str | None = None):
    """The depth sweep (``load_results("depth-sweep", corpus="kjv")["corpus"]``) against the number of layers, on a
    log₂ axis: (1) the value-residual gain, learnable − baseline final validation loss (nats), one dot per seed and
    the mean with its 95 % interval; (2) the baseline's attention entropy over layers ≥ 1 minus uniform causal
    attention's (below 0 = concentrated: ResFormer's premise); (3) the slope of the learned λ1 against layer. The
    numbers: :mod:`vrs_edu.chapters.ch03_value_residual.depth_sweep`. ``lang``: the labels' language."""
    def t(en: str, ko: str) -> str:
        return in_language(en, ko, lang)
    depths = ds.depths_in(part)
    panels = ((t("gain: learnable − baseline (nats)", "이득: learnable − 기준선 (nats)"), ds.gains(part)),
              (t("baseline entropy − uniform (nats)", "기준선 엔트로피 − 균등 (nats)"), ds.concentration(part)),
              (t("learned λ1: slope per layer", "학습된 λ1: 층당 기울기"), ds.lambda_slopes(part)))
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.8))
    for ax, (label, values) in zip(axes, panels):
        for L in depths:
            ax.plot([L] * len(values[L]), values[L], "o", color="0.6", ms=3)
        stats = [t_test(values[L]) for L in depths]
        means = [s["mean"] for s in stats]
        ax.errorbar(depths, means, yerr=[[m - s["ci"][0] for m, s in zip(means, stats)],
                                         [s["ci"][1] - m for m, s in zip(means, stats)]],
                    marker="o", color="C1", capsize=3, label=t("mean, 95 % CI", "평균, 95 % 신뢰구간"))
        ax.axhline(0, color="black", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths, [str(L) for L in depths])
        ax.set_xlabel(t("layers (width 64)", "층 수 (폭 64)"))
        ax.set_title(label)
    axes[0].legend(loc="lower left")
    fig.tight_layout()
    return fig
