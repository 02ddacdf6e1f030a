"""Chapter 04's numbers and sentences: which path (Q, K or V) of the deep layers re-read x0 in the saved
bank-of-values runs, read at the three coefficient learning rates of the sweep, beside what the model *needs*.

The chapter shows a figure (:func:`vrs_edu.chapters.ch04_bank_of_values.figures.plot_rate_sweep`) and the sentences built here; every sentence
takes its words from the sign, size and verdict of the number it states (a margin of -0.000 is not "above"), and
each has a unit test with a known input (tests/test_chapter04.py).

Sources: He, Liu, Huang and Zhang, "Do Value Vectors in Deep Layers Need Context from the Residual Stream?"
(arXiv 2606.02780), Fig. 2 (the additive criterion) and the authors' post (V re-reads x0, Q and K do not).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from vrs_edu.chapters.ch03_value_residual import depth_sweep, recall
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.i18n.korean import attach, particle
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.i18n.verdicts import label, verdict_word
from vrs_edu.lab.analysis import mean, mean_sd
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.lab.premises import DEEP_X0_R2, LM_TOYS_SHORT
from vrs_edu.lab.train import OFFICIAL_X0_GROUPS, official_x0_groups
from vrs_edu.viz.prose import declared_result, table

PATHS = "qkv"
ARM_ORDER = ("×0.25", "×1", "×4")        # the coefficient-rate sweep, slowest first


def _verdict_ko(verdict: str) -> str:
    """The course's Korean word for a verdict (:mod:`vrs_edu.i18n.verdicts`)."""
    return verdict_word(verdict, "ko")


def _and_ko(items: Sequence[str]) -> str:
    """Korean "a, b and c": ``["×1", "×4"]`` -> ``"×1과 ×4"`` (the particle after the last-but-one item)."""
    items = list(items)
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-2] + [attach(items[-2], "과/와") + " " + items[-1]])


def x0_share(alpha: float, beta: float) -> float:
    """|β| / (|α| + |β|): 0 = the projection reads only the stream, 1 = only x0. Raises ValueError when both are 0
    (the share is undefined)."""
    if alpha == 0 and beta == 0:
        raise ValueError("x0_share: alpha and beta are both 0, the share is undefined")
    return abs(beta) / (abs(alpha) + abs(beta))


def run_shares(run: dict) -> dict[str, float]:
    """One trained qkv run's x0 share per path, mean over its x0 layers, from its final ``coefficients``
    (``blocks.{l}.x0.alpha_q`` ...)."""
    c = run["coefficients"]
    layers = sorted({int(k.split(".")[1]) for k in c if ".x0.beta_" in k})
    return {s: sum(x0_share(c[f"blocks.{l}.x0.alpha_{s}"], c[f"blocks.{l}.x0.beta_{s}"]) for l in layers)
            / len(layers) for s in PATHS}


def rate_sweep(corpus_part: dict, arms: dict[str, str]) -> dict[str, dict]:
    """Per rate arm (``arms``: arm -> variant, e.g. ``{"×1": "qkv", ...}``), in :data:`ARM_ORDER`: ``shares``
    {path: [per seed]}, ``margin_q`` / ``margin_k`` (share_v − share_q / − share_k, per seed), ``cost`` {path:
    [removal cost per seed, nats]} and the variant's name. Seeds in seed order."""
    out = {}
    for arm in sorted(arms, key=lambda a: ARM_ORDER.index(a) if a in ARM_ORDER else len(ARM_ORDER)):
        runs = sorted(corpus_part["runs"][arms[arm]], key=lambda r: r["seed"])
        sh = [run_shares(r) for r in runs]
        out[arm] = {"variant": arms[arm], "seeds": [r["seed"] for r in runs],
                    "shares": {s: [x[s] for x in sh] for s in PATHS},
                    "margin_q": [x["v"] - x["q"] for x in sh], "margin_k": [x["v"] - x["k"] for x in sh],
                    "cost": {s: [r["x0_removal_cost"][s] for r in runs] for s in PATHS}}
    return out



def _diff(x: float, digits: int = 3) -> str:
    """A difference with its sign, ``+0.063``; one that rounds to zero prints ``0.000``, not ``-0.000``."""
    return f"{0.0:.{digits}f}" if round(x, digits) == 0 else f"{x:+.{digits}f}"


def _above(x: float, digits: int = 3) -> bool:
    """Above 0 as the sentence prints it: +0.0004 reads +0.000, which is not above."""
    return round(x, digits) > 0


def share_sentence(sweep: dict[str, dict], verdict: str | None = None, would_be: str | None = None,
                   lang: str | None = None) -> str:
    """The chapter's takeaway on the shares: does V's x0 share exceed Q's at every rate, at none, or only at some?
    The words about the claim come from its verdict, never from the means alone (review 3, M2): ``verdict`` is the
    judged verdict of ``v_reads_x0_more_than_q`` (with its ``would_be`` when out of regime); None when the numbers
    are a description (the recipe declares no test on them, because their premise fails on this toy).
    ``lang``: "en" or "ko" (None: the running notebook's edition)."""
    f = _share_facts(sweep, verdict)
    if resolve_language(lang) == "ko":
        return _share_sentence_ko(sweep, verdict, would_be, f)
    m, above, below = f["m"], f["above"], f["below"]
    listed = ", ".join(f"{_diff(m[a])} at {a}" for a in m)
    shares = ", ".join(f"{mean(a['shares']['v']):.3f} at {arm}" for arm, a in sweep.items())
    if f["rates"] == "all":
        head = f"V's x0 share exceeds Q's at all {len(m)} learning rates (share_v − share_q: {listed})"
        tail = "the order V over Q does not depend on the rate in this 16× span"
    elif f["rates"] == "none":
        head = f"V's x0 share does not exceed Q's at any of the {len(m)} learning rates ({listed})"
        tail = "the published order, V over Q, does not appear here"
    else:
        head = (f"V's x0 share exceeds Q's at {' and '.join(above)} but not at {' and '.join(below)} "
                f"(share_v − share_q: {listed})")
        tail = "which path takes more x0 moves with the coefficients' learning rate"
    if f["claim"] == "description":
        said = ("these shares are a description, not a judged test: their premise fails on this toy (below), so "
                "they answer no claim")
    elif f["claim"] == "not judged":
        said = (f"the claim is {verdict}" + (f" (judged anyway it would be {would_be})" if would_be else "")
                + ", so the shares answer no claim")
    else:
        said = f"by the course's rule the claim is {verdict}"
    return f"{head}; V's own share is {shares}: {tail}; {said}."


def _share_facts(sweep: dict[str, dict], verdict: str | None) -> dict:
    """What :func:`share_sentence` states, decided once for both languages: ``m`` (each rate's mean share_v −
    share_q), the rates where it is ``above`` 0 as printed and those ``below``, ``rates`` ("all", "none" or
    "some" above) and ``claim`` ("description" without a verdict, "not judged" out of regime or n/a, else
    "judged")."""
    m = {arm: mean(a["margin_q"]) for arm, a in sweep.items()}
    above = [arm for arm in m if _above(m[arm])]
    return {"m": m, "above": above, "below": [a for a in m if a not in above],
            "rates": "all" if len(above) == len(m) else "none" if not above else "some",
            "claim": ("description" if verdict is None else
                      "not judged" if verdict in ("out of regime", "n/a") else "judged")}


def _share_sentence_ko(sweep: dict[str, dict], verdict: str | None, would_be: str | None, f: dict) -> str:
    """:func:`share_sentence` in Korean: the same words from the same signs and verdict (:func:`_share_facts`)."""
    m, above, below = f["m"], f["above"], f["below"]
    listed = ", ".join(f"{a}에서 {_diff(m[a])}" for a in m)
    shares = ", ".join(f"{arm}에서 {mean(a['shares']['v']):.3f}" for arm, a in sweep.items())
    if f["rates"] == "all":
        head = f"V의 x0 비중은 {len(m)}가지 학습률 모두에서 Q의 비중보다 큽니다(share_v − share_q: {listed})"
        tail = "이 16배 범위에서 V가 Q보다 크다는 순서는 학습률에 따라 달라지지 않습니다"
    elif f["rates"] == "none":
        head = f"V의 x0 비중은 {len(m)}가지 학습률 어디에서도 Q의 비중보다 크지 않습니다({listed})"
        tail = "발표된 순서(V가 Q보다 큼)는 여기서 나타나지 않습니다"
    else:
        head = (f"V의 x0 비중은 {_and_ko(above)}에서는 Q의 비중보다 크지만 {_and_ko(below)}에서는 그렇지 않습니다"
                f"(share_v − share_q: {listed})")
        tail = "어느 경로가 x0을 더 많이 가져가는지는 계수의 학습률에 따라 달라집니다"
    if f["claim"] == "description":
        said = ("이 비중은 판정된 검정이 아니라 서술입니다. 그 전제가 이 장난감 모델에서 성립하지 않으므로(아래) "
                "어떤 주장에도 답하지 않습니다")
    elif f["claim"] == "not judged":
        said = (f"주장의 판정은 {_verdict_ko(verdict)}"
                + (f"(그래도 판정하면 {_verdict_ko(would_be)})" if would_be else "")
                + "이므로, 비중은 어떤 주장에도 답하지 않습니다")
    else:
        said = f"강좌의 규칙에 따른 주장의 판정: {_verdict_ko(verdict)}"
    return f"{head}. V 자신의 비중은 {shares}입니다. 즉 {tail}. {said}."


def need_sentence(sweep: dict[str, dict], deep_r2: float, threshold: float, lang: str | None = None) -> str:
    """What the model needs: the loss cost of removing each path's x0 (largest over the rates) and how much of the
    deep inputs is token identity already (``deep_r2``, x0-R², against the premise's ``threshold``)."""
    cost = {arm: {s: mean(a["cost"][s]) for s in PATHS} for arm, a in sweep.items()}
    top = max(cost, key=lambda arm: max(cost[arm].values()))
    biggest = max(cost[top], key=cost[top].get)
    small = max(cost[top].values()) < 0.05
    if resolve_language(lang) == "ko":
        r2 = (f"기준선의 깊은 층에서는 이미 입력 분산의 {deep_r2:.2f}가 토큰 정체성으로 설명됩니다(x0-R², "
              + (f"{threshold:g} 미만이어야 x0을 다시 읽을 필요가 생길 수 있는데, 이보다 높음)" if deep_r2 >= threshold
                 else f"{threshold:g}보다 낮음: 대부분 문맥이므로 x0을 다시 읽을 필요가 생길 수 있음)"))
        return (f"필요는 {'작습니다' if small else '분명합니다'}. 학습된 모델에서 한 경로의 x0을 제거하는 비용은 최대 "
                f"{cost[top][biggest]:+.3f} nats이고({top}의 {biggest.upper()}; "
                + ", ".join(f"{s.upper()} {cost[top][s]:+.3f}" for s in PATHS) + "), " + r2 + ".")
    r2 = (f"the baseline's deep inputs are already {deep_r2:.2f} token identity (x0-R², "
          + (f"above the {threshold:g} below which re-reading x0 could be needed)" if deep_r2 >= threshold
             else f"below {threshold:g}: mostly context, so re-reading x0 could be needed)"))
    return (f"Need {'is small' if small else 'is clear'}: removing a path's x0 from a trained model costs at most "
            f"{cost[top][biggest]:+.3f} nats ({biggest.upper()} at {top}; "
            + ", ".join(f"{s.upper()} {cost[top][s]:+.3f}" for s in PATHS) + "), and " + r2 + ".")


def instruments_sentence(sweep: dict[str, dict], pressure_log_ratio: float, ablation_largest: float,
                         base_sd: float, lang: str | None = None) -> str:
    """Why the instruments disagree, with their numbers: shares follow the rate, removal costs are tiny, the
    gradient pressure (``pressure_log_ratio`` = ln |∂L/∂β_v| / |∂L/∂β_q| at β = 0, said in words as a ratio
    e^x) leans one way, the substitution ablation moves the loss less than the seeds differ (``base_sd``) or not."""
    arms = list(sweep)
    m = [mean(sweep[a]["margin_q"]) for a in arms]
    strong, weak = ("V", "Q") if pressure_log_ratio > 0 else ("Q", "V")
    if resolve_language(lang) == "ko":
        narrow = ablation_largest < base_sd
        return (f"비중은 학습률을 따라 움직입니다(share_v − share_q: {_diff(min(m))}에서 {_diff(max(m))}까지). 계수는 "
                "손실이 요구하는 만큼만이 아니라 옵티마이저가 수백 스텝 동안 옮겨 주는 만큼 움직이기 때문입니다. "
                f"학습된 기준선에서 기울기 압력은 {strong}의 x0을 더 세게 당기지만({strong}의 기울기 당김은 "
                f"{weak}의 e^{abs(pressure_log_ratio):.2f} ≈ {math.exp(abs(pressure_log_ratio)):.1f}배), 당김이 곧 "
                f"필요는 아닙니다. 대체 절제는 x0 층에서 손실을 최대 {ablation_largest:.3f} nats 움직이며, 이는 "
                f"기준선의 시드끼리 서로 다른 정도(약 {base_sd:.3f} nats)보다 "
                + ("작습니다. 경로의 순위를 매기기에는 범위가 너무 좁습니다." if narrow else "큽니다."))
    pull = (f"pulls harder on {strong}'s x0 ({strong}'s gradient pull is e^{abs(pressure_log_ratio):.2f} ≈ "
            f"{math.exp(abs(pressure_log_ratio)):.1f}× {weak}'s)")
    return (f"The shares move with the rate (share_v − share_q from {_diff(min(m))} to {_diff(max(m))}), because a "
            "coefficient moves as far as its optimiser carries it in a few hundred steps, not only as far as the "
            f"loss asks. The gradient pressure on the trained baseline {pull}, but a pull is not a need. The "
            f"substitution ablation moves the loss by at most {ablation_largest:.3f} nats in the x0 layers, "
            + ("less than" if ablation_largest < base_sd else "more than")
            + f" the baseline's seeds differ from one another (by about {base_sd:.3f} nats)"
            + (": too little range to rank the paths." if ablation_largest < base_sd else "."))


def holds(value: float, threshold: float, lang: str | None = None) -> str:
    """A premise "value below threshold" as the premise table's *holds?* column says it: "yes" or "no" (Korean:
    "예" or "아니요"; ``lang`` None: the running notebook's edition)."""
    if resolve_language(lang) == "ko":
        return "예" if value < threshold else "아니요"
    return "yes" if value < threshold else "no"


def premises_sentence(ch04: float, ch04_threshold: float, ch05: float, ch05_threshold: float,
                      lang: str | None = None) -> str:
    """What follows from the x0-R² premise (the deep inputs below ``ch04_threshold``) on this chapter's runs and on
    chapter 05's (below ``ch05_threshold``, the same premise declared once: today the same number): which hold on
    this corpus and what that makes of the x0 numbers that rest on them."""
    ok4, ok5 = ch04 < ch04_threshold, ch05 < ch05_threshold
    if resolve_language(lang) == "ko":
        head = (f"이 장의 전제는 성립합니다({ch04:.3f} < {ch04_threshold:g}). x0 비중에 관한 주장은 답으로 읽습니다"
                if ok4 else
                f"이 장의 전제는 성립하지 않습니다({attach(f'{ch04:.3f}', '은/는')} {ch04_threshold:g} 미만이 아님). "
                "깊은 층의 입력이 이미 대부분 토큰 정체성이므로, 위의 x0 비중은 이 말뭉치에서 판정된 주장이 아니라 "
                "서술입니다(보여 주지만 어떤 주장에도 답하지 않습니다)")
        cond5 = (f"{ch05:.3f} < {ch05_threshold:g}" if ok5 else
                 f"{attach(f'{ch05:.3f}', '은/는')} {ch05_threshold:g} 미만이 아님")
        return f"{head}. 05장의 전제{'는 성립합니다' if ok5 else '도 성립하지 않습니다'}({cond5})."
    if ok4:
        head = (f"This chapter's premise holds ({ch04:.3f} < {ch04_threshold:g}): its x0-share claims are read as "
                "answers")
    else:
        head = (f"This chapter's premise fails ({ch04:.3f} is not below {ch04_threshold:g}): the deep inputs are "
                "mostly token identity already, so the x0 shares above are descriptions on this corpus, not "
                "judged claims (they are shown, but they answer no claim)")
    tail = (f"chapter 05's {'holds' if ok5 else 'fails too'} ({ch05:.3f} "
            + ("<" if ok5 else "is not below") + f" {ch05_threshold:g})")
    return f"{head}; {tail}."


def _range(xs: Sequence[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def lm_toys_sentence(depth_r2: dict[int, float], here: float, recall: float | None, decoder: float | None,
                     threshold: float, lang: str | None = None) -> str:
    """Why the language-model toys cannot answer the x0 claims, from the stored numbers: their deep inputs' x0-R²
    at every depth of the depth sweep (``depth_r2``: layers -> mean over seeds), and in this chapter's runs
    (``here``), against the premise's ``threshold``; and where the claims are judged instead: the recall task
    (``recall``) and the real decoder's last third (``decoder``), when their premise holds there (None: not
    measured). Raises ValueError on an empty ``depth_r2``."""
    if not depth_r2:
        raise ValueError("lm_toys_sentence: depth_r2 is empty (no depth of the depth sweep)")
    depths = sorted(depth_r2)
    below = [L for L in depths if depth_r2[L] < threshold]
    # where the claims are judged instead (the premise holds there), the same for both languages
    judged = [(where, r2) for where, r2 in (("recall", recall), ("decoder", decoder))
              if r2 is not None and r2 < threshold]
    if resolve_language(lang) == "ko":
        return _lm_toys_sentence_ko(depth_r2, depths, below, here, judged, threshold)
    where = (f"at every depth from {depths[0]} to {depths[-1]} layers" if len(depths) > 1 else
             f"at {depths[0]} layers")
    if below:
        head = (f"The language-model toys' deep inputs are {_range(list(depth_r2.values()))} token identity "
                f"(x0-R²) over the depth sweep, below the premise's {threshold:g} only at "
                f"{', '.join(map(str, below))} layers ({here:.2f} in this chapter's runs)")
    else:
        head = (f"No language-model toy here can answer the x0 claims: their deep inputs are "
                f"{_range(list(depth_r2.values()))} token identity (x0-R²) {where} (the depth sweep; {here:.2f} in "
                f"this chapter's runs), above the premise's {threshold:g}, so every path already reads x0 through "
                "its input and neither a share nor a removal cost can say which path needs it")
    places = {"recall": "on the recall task", "decoder": "in the real decoder's last third"}
    judged = [f"{places[where]} ({r2:.2f})" for where, r2 in judged]
    tail = (f"; the x0 claims are judged where the premise holds instead: {' and '.join(judged)}." if judged
            else "; no model measured here meets the premise.")
    return head + tail


def _lm_toys_sentence_ko(depth_r2: dict[int, float], depths: list[int], below: list[int], here: float,
                         judged: list[tuple[str, float]], threshold: float) -> str:
    """:func:`lm_toys_sentence` in Korean."""
    spread = _range(list(depth_r2.values()))
    where = f"{depths[0]}층부터 {depths[-1]}층까지 모든 깊이에서" if len(depths) > 1 else f"{depths[0]}층에서"
    if below:
        head = (f"언어 모델 장난감들의 깊은 층에서는 깊이 스윕 전체에서 입력 분산의 {attach(spread, '이/가')} 토큰 정체성으로 "
                f"설명되며(x0-R²), 전제의 경계값 {threshold:g}보다 낮은 것은 {', '.join(map(str, below))}층뿐입니다(이 장의 실행에서는 "
                f"{here:.2f})")
    else:
        head = (f"여기의 어떤 언어 모델 장난감도 x0 주장에 답할 수 없습니다. 깊은 층에서는 {where} 입력 분산의 {attach(spread, '이/가')} "
                f"토큰 정체성으로 설명되어(x0-R²; 깊이 스윕; 이 장의 실행에서는 {here:.2f}) 전제의 경계값 {threshold:g}보다 "
                "높으므로, "
                "모든 경로가 이미 입력을 통해 x0을 읽고, 비중도 제거 비용도 어느 경로가 그것을 필요로 하는지 말할 수 "
                "없습니다")
    places = {"recall": "회상 과제", "decoder": "실제 디코더의 마지막 3분의 1"}
    judged = [f"{places[where]}({r2:.2f})" for where, r2 in judged]
    tail = (f". x0 주장은 대신 전제가 성립하는 곳에서 판정합니다: {_and_ko(judged)}." if judged
            else ". 여기서 잰 어떤 모델도 전제를 충족하지 않습니다.")
    return head + tail


def lm_toys_evidence(out_dir=None) -> dict:
    """The stored numbers :func:`lm_toys_sentence` reads: the depth sweep's baseline x0-R² per depth (its
    ``deep_x0_r2_by_depth``), this chapter's ``deep_context`` fact, the recall task's ``recall_deep_context``, the
    real decoder's mean input x0-R² over its last third, and the premise's threshold (``vrs_edu.lab.premises``); a
    missing result gives None (an empty dict for the depths)."""
    threshold = DEEP_X0_R2
    ds = load_results_or_none("depth-sweep", corpus=verdict_corpus(), out_dir=out_dir)
    bov = load_results_or_none("bank-of-values", corpus=verdict_corpus(), out_dir=out_dir)
    rc = load_results_or_none("recall", out_dir=out_dir)
    dec = load_results_or_none("real-decoder", out_dir=out_dir)
    depth = {L: mean(v) for L, v in depth_sweep.deep_x0_r2_by_depth(ds["corpus"]).items()} if ds else {}
    decoder = None
    if dec and dec.get("probes", {}).get("x0_r2", {}).get("input"):
        late = dec["thirds"]["late"]
        decoder = mean([dec["probes"]["x0_r2"]["input"][l] for l in late])
    return {"depth_r2": depth, "here": bank_of_values.facts(bov)["deep_context"] if bov else float("nan"),
            "recall": recall.facts(rc)["recall_deep_context"] if rc else None, "decoder": decoder,
            "threshold": threshold}


def beta_rate(train: dict, block_size: int) -> float:
    """The AdamW rate β was trained at, from a run's ``train`` config (a result's, a checkpoint's, or a
    ``TrainConfig`` as a dict): the official groups' rate scaled to the batch (``batch_size`` × ``block_size``
    tokens per step) times ``coef_lr_scale`` when the config has that key; a config without it comes from the runs
    made before the batch scaling, which used the official rate unscaled (0.5).

    Raises:
        ValueError: the run did not train its coefficients with ``coef_opt="official"``.
    """
    if train.get("coef_opt") != "official":
        raise ValueError(f"beta_rate: train['coef_opt'] must be 'official', got {train.get('coef_opt')!r}")
    if "coef_lr_scale" not in train:
        return OFFICIAL_X0_GROUPS["x0_beta_gamma"]["lr"]
    return official_x0_groups(train["batch_size"] * block_size, train["coef_lr_scale"])["x0_beta_gamma"]["lr"]


def rate_note(base_rate: float, other_rate: float, whose: str) -> str:
    """``other_rate`` against ``base_rate`` (β learning rates) for a sentence: "the same rate as the {whose}",
    "16× the {whose}" or "1/16 of the {whose}". Raises ValueError for a non-positive rate."""
    if base_rate <= 0 or other_rate <= 0:
        raise ValueError(f"rate_note: rates must be > 0, got base_rate {base_rate}, other_rate {other_rate}")
    r = other_rate / base_rate
    if math.isclose(r, 1.0, rel_tol=1e-6):
        return f"the same rate as the {whose}"
    return f"{r:.3g}× the {whose}" if r > 1 else f"1/{1 / r:.3g} of the {whose}"


def live_sentence(live: dict[str, float], steps: int, val_loss: float, saved: Sequence[dict[str, float]],
                  corpus: str, live_rate: float, saved_rate: float) -> str:
    """The live run's x0 shares beside the saved runs on its ``corpus`` (``saved``: per seed {path: share}); when the
    saved runs trained β at another rate (``saved_rate`` vs ``live_rate``, AdamW lr) the sentence says they cannot
    be read together and why their shares differ, instead of comparing them."""
    mine = ", ".join(f"{s} {live[s]:.3f}" for s in PATHS)
    theirs = ", ".join(f"{s} {mean([x[s] for x in saved]):.3f}" for s in PATHS)
    head = (f"After {steps} steps (validation loss {val_loss:.3f} nats) the live model's x0 shares are {mine}. ")
    if math.isclose(live_rate, saved_rate, rel_tol=1e-6):
        return head + f"The saved runs on the same corpus ({corpus}, β at the same rate): {theirs} (mean over seeds)."
    note = rate_note(live_rate, saved_rate, "live run's")
    return (head + f"The saved runs on {corpus} ({theirs}, mean over seeds) are not like runs: they trained β at "
            f"{saved_rate:.4g}, {note} {live_rate:.4g} (they were made before the rates were scaled to our "
            "batch). A coefficient moves about as far as its rate carries it in the same steps, so their shares "
            "differ from the live run's for that reason, and the two cannot be read together.")


def _change_kind(r) -> str:
    """How a context-free design's loss change is said, the same for both languages: "negligible" (its verdict),
    "unsettled" (its interval holds 0 or its mean prints as 0.000), "lower" or "raise"."""
    lo, hi = r.ci
    if getattr(r, "verdict", None) == "negligible":
        return "negligible"
    if lo <= 0 <= hi or round(r.mean, 3) == 0:     # the seeds do not tell its sign
        return "unsettled"
    return "lower" if r.mean < 0 else "raise"


def _better(by: dict) -> list[str]:
    """The context-free designs named as doing better (``substitute_loss``, ``bank_loss``, in that order): only
    those whose lower loss is reproduced (a learner read "V := γ·W_V x0 … negligible" under a headline that said
    both did better)."""
    return [key for key in ("substitute_loss", "bank_loss")
            if by[key].mean < 0 and getattr(by[key], "verdict", "reproduced") == "reproduced"]


def context_free_sentence(by: dict, lang: str | None = None) -> str:
    """Values that ignore context (``substitute_loss``, ``bank_loss`` and their scale-only controls, from the
    chapter's verdicts ``by`` name): lower or raise the loss, by how much, and against the control. A *negligible*
    verdict (interval inside ± its declared smallest effect) is said as too small to matter, not as a gain, and the
    lead clause says "do better" only when a context-free design's lower loss is reproduced (:func:`_change_kind`,
    :func:`_better`: the same for both languages). ``lang``: "en" or "ko" (None: the running notebook's
    edition)."""
    if resolve_language(lang) == "ko":
        return _context_free_sentence_ko(by)

    def said(name: str) -> str:
        r = by[name]
        kind = _change_kind(r)
        if kind == "negligible":
            return (f"changes the loss by {r.mean:+.3f} nats, negligible (inside ±{r.test.margin:g}, its smallest "
                    "effect of interest: too small to matter)")
        if kind == "unsettled":
            return f"leaves the loss where it was ({r.mean:+.3f} nats, its sign not settled by the seeds)"
        return f"{'lowers' if kind == 'lower' else 'raises'} the loss by {abs(r.mean):.3f} nats"

    names = {"substitute_loss": "V := γ·W_V x0", "bank_loss": "the learned table (the bank)"}
    better = [names[key] for key in _better(by)]
    head = ("Values that ignore the context altogether do better than re-reading it" if len(better) == 2 else
            f"Of the values that ignore the context, only {better[0]} does better than re-reading it"
            if better else "")
    return (f"{head}: V := γ·W_V x0 "
            f"{said('substitute_loss')} and the learned table (the bank) {said('bank_loss')} against the baseline, "
            f"while x0 added to Q, K and V {said('qkv_loss')}; the scale-only control that never reads x0 "
            f"{said('scale_control_costs')}.") if better else (
        f"Values that ignore the context do not help here: V := γ·W_V x0 {said('substitute_loss')}, the bank "
        f"{said('bank_loss')}.")


def _context_free_sentence_ko(by: dict) -> str:
    """:func:`context_free_sentence` in Korean, one sentence per design (Korean joins clauses less freely)."""
    def said(name: str) -> str:
        r = by[name]
        kind = _change_kind(r)
        if kind == "negligible":
            return (f"손실을 {r.mean:+.3f} nats 바꾸며, 무시할 만합니다(관심 최소 효과 ±{r.test.margin:g} 안: "
                    "의미를 갖기에는 너무 작음)")
        if kind == "unsettled":
            return f"손실을 그대로 둡니다({r.mean:+.3f} nats, 시드로는 부호가 정해지지 않음)"
        return f"손실을 {abs(r.mean):.3f} nats {'낮춥니다' if kind == 'lower' else '높입니다'}"

    sub, bank = "V := γ·W_V x0", "학습된 표(값 뱅크)"
    better = [{"substitute_loss": sub, "bank_loss": bank}[key] for key in _better(by)]
    if not better:
        return (f"문맥을 무시하는 값은 여기서 도움이 되지 않습니다. {attach(sub, '은/는')} {said('substitute_loss')}. "
                f"값 뱅크는 {said('bank_loss')}.")
    head = ("문맥을 아예 무시하는 값이 x0을 다시 읽는 것보다 낫습니다" if len(better) == 2 else
            f"문맥을 무시하는 값 가운데 {better[0]}만 x0을 다시 읽는 것보다 낫습니다")
    return (f"{head}. 기준선에 비해 {attach(sub, '은/는')} {said('substitute_loss')}. "
            f"{attach(bank, '은/는')} {said('bank_loss')}. 반면 Q, K, V에 x0을 더한 모델은 {said('qkv_loss')}. "
            f"x0을 읽지 않고 크기만 바꾸는 대조군은 {said('scale_control_costs')}.")


def recall_sentence(recall_sweep: dict[str, dict], plateaued: dict[str, float], lang: str | None = None) -> str:
    """The recall task's x0 shares at each rate: V over Q and over K, and which rates had settled coefficients
    (``plateaued``: arm -> fraction of plateaued β trajectories; the precondition needs > 0.5). ``lang``: "en" or
    "ko" (None: the running notebook's edition)."""
    f = _recall_facts(recall_sweep, plateaued)
    if resolve_language(lang) == "ko":
        return _recall_sentence_ko(recall_sweep, plateaued, f)
    settled, over_k, over_q = f["settled"], f["over_k"], f["over_q"]
    parts = []
    for arm, a in recall_sweep.items():
        parts.append(f"{arm}: v − q {mean(a['margin_q']):+.3f}, v − k {mean(a['margin_k']):+.3f}"
                     f" ({plateaued[arm]:.2f} plateaued)")
    return ("On the recall task, where the answer is a token fetched by its key, V's x0 share "
            + ("exceeds K's at every rate" if over_k else "does not exceed K's at every rate")
            + (" and Q's too" if over_q else ", but not Q's at every rate (at a query, Q is the key token itself)")
            + "; " + "; ".join(parts) + ". "
            + {"some": f"Only at {' and '.join(settled)} had most coefficients stopped moving.",
               "all": "Most coefficients had stopped moving at every rate.",
               "none": "At no rate had most coefficients stopped moving."}[f["rates"]])


def _recall_facts(recall_sweep: dict[str, dict], plateaued: dict[str, float]) -> dict:
    """What :func:`recall_sentence` states, decided once for both languages: the ``settled`` rates (most β
    trajectories plateaued, > 0.5), ``rates`` ("some", "all" or "none" settled), and whether V's x0 share exceeds
    K's (``over_k``) and Q's (``over_q``) at every rate, as printed."""
    settled = [arm for arm in recall_sweep if plateaued[arm] > 0.5]
    return {"settled": settled,
            "rates": "some" if settled and len(settled) < len(recall_sweep) else "all" if settled else "none",
            "over_k": all(_above(mean(a["margin_k"])) for a in recall_sweep.values()),
            "over_q": all(_above(mean(a["margin_q"])) for a in recall_sweep.values())}


def _recall_sentence_ko(recall_sweep: dict[str, dict], plateaued: dict[str, float], f: dict) -> str:
    """:func:`recall_sentence` in Korean (:func:`_recall_facts`)."""
    parts = [f"{arm}: v − q {mean(a['margin_q']):+.3f}, v − k {mean(a['margin_k']):+.3f}"
             f"(계수의 {plateaued[arm]:.0%}가 수렴)" for arm, a in recall_sweep.items()]
    settled, over_k, over_q = f["settled"], f["over_k"], f["over_q"]
    return ("답이 키로 찾아오는 토큰인 회상 과제에서 V의 x0 비중은 "
            + ("모든 학습률에서 K의 비중보다 크고" if over_k else "모든 학습률에서 K의 비중보다 크지는 않고")
            + (", Q의 비중보다도 큽니다" if over_q else
               ", Q의 비중보다 모든 학습률에서 크지는 않습니다(쿼리 위치에서 Q는 키 토큰 그 자체입니다)")
            + ". " + "; ".join(parts) + ". "
            + {"some": f"{_and_ko(settled)}에서만 대부분의 계수가 움직임을 멈췄습니다.",
               "all": "모든 학습률에서 대부분의 계수가 움직임을 멈췄습니다.",
               "none": "어느 학습률에서도 대부분의 계수가 움직임을 멈추지 않았습니다."}[f["rates"]])


def largest_step(sweep: dict, paths: str = PATHS) -> tuple[float, str, float, float]:
    """The largest loss change one slider step makes anywhere on the sliders of ``paths`` in a
    :func:`vrs_edu.chapters.ch04_bank_of_values.readout.beta_sweep` (neighbouring factors): ``(|Δ| nats, path, from factor, to
    factor)``, the step taken towards ×1 first when both directions are equal."""
    fs = sweep["factors"]
    return max((abs(sweep["delta"][s][j + 1] - sweep["delta"][s][j]), s, fs[j + 1], fs[j])
               for s in paths for j in range(len(fs) - 1))


def _factor(f: float) -> str:
    return f"×{f:g}" if f >= 1 else f"×1/{1 / f:g}"


def widget_sentence(steps: dict[str, dict[str, float]], cost: dict[str, float], sweep: dict, corpus: str,
                    beta_rate: float, main_rate: float, main_corpus: str, lang: str | None = None) -> str:
    """What one slider step *from the trained setting ×1* (β halved or doubled,
    :func:`vrs_edu.chapters.ch04_bank_of_values.readout.step_changes`) does to the loss through each path, the largest step anywhere on
    the sliders (:func:`largest_step` of ``sweep``), what removing each path's x0 costs on the widget's checkpoint,
    and that this checkpoint is its own run (``corpus``, β at ``beta_rate``) whose numbers do not compare with the
    chapter's main runs' (on ``main_corpus``, β at ``main_rate``) when the two differ. ``lang``: "en" or "ko"
    (None: the running notebook's edition)."""
    qk = max(abs(steps[s][f"delta_{d}"]) for s in "qk" for d in ("down", "up"))
    v = [abs(steps["v"][f"delta_{d}"]) for d in ("down", "up")]
    order = "less than" if qk < min(v) else "as much as or more than"
    big, path, f_from, f_to = largest_step(sweep, "qk")
    same = math.isclose(beta_rate, main_rate, rel_tol=1e-6) and corpus == main_corpus
    if resolve_language(lang) == "ko":
        r = beta_rate / main_rate
        ratio = f"{r:.3g}배" if r > 1 else f"1/{1 / r:.3g}"
        return (f"학습된 설정에서(×1에서 ×1/2 또는 ×2로) 슬라이더 한 칸은 Q나 K를 통해 손실을 최대 {qk:.4f} nats "
                f"움직이며, 이는 V를 통한 변화({min(v):.4f}-{max(v):.4f})"
                + ("보다 작습니다" if qk < min(v) else "와 같거나 그보다 큽니다")
                + ". QK-norm 아래에서 어텐션은 α·x + β·x0의 방향만 봅니다. ×1에서 벗어나면 Q나 K의 한 칸이 손실을 "
                + ("더 많이 움직일 수 있습니다" if big > qk else "그보다 더 움직이지는 않습니다")
                + f". 그 슬라이더들에서 가장 큰 변화는 {path.upper()}의 {_factor(f_from)}에서 {attach(_factor(f_to), '으로/로')} 가는 "
                f"한 칸으로, {big:.3f} nats입니다. 각 경로의 x0을 제거하면(β := 0) 비용은 "
                + ", ".join(f"{s} {cost[s]:+.3f}" for s in PATHS) + " nats입니다. "
                + (f"위젯의 체크포인트는 {corpus}에서 왔으며, β의 학습률은 위 {CORPUS_KO.get(main_corpus, main_corpus)} "
                   f"실행과 같은 {_was_ko(f'{beta_rate:.4g}')}." if same else
                   f"위젯의 체크포인트는 별도의 실행으로, {corpus}에서 β를 {attach(f'{beta_rate:.4g}', '으로/로')} 학습했습니다"
                   f"({main_corpus} 실행의 {main_rate:.4g}의 {ratio}"
                   + (", 학습률을 우리 배치에 맞추기 전" if beta_rate > main_rate else "")
                   + f"). 다른 모델이므로 이 수치는 위의 {main_corpus} 실행과 비교할 수 없습니다."))
    note = rate_note(main_rate, beta_rate, f"{main_corpus} runs'")
    return (f"From the trained setting (×1 to ×1/2 or ×2) one slider step moves the loss by at most {qk:.4f} nats "
            f"through Q or K, {order} through V ({min(v):.4f}-{max(v):.4f}): under QK-norm attention sees only the "
            "direction of α·x + β·x0. Away from ×1 a Q or K step can move it "
            + ("more" if big > qk else "no more") + f": the largest anywhere on their sliders is {path.upper()} "
            f"from {_factor(f_from)} to {_factor(f_to)}, {big:.3f} nats. "
            "Removing each path's x0 (β := 0) costs " + ", ".join(f"{s} {cost[s]:+.3f}" for s in PATHS) + " nats. "
            + (f"The widget's checkpoint comes from {corpus}, with β trained at {beta_rate:.4g} as in the "
               f"{main_corpus} runs above." if same else
               f"The widget's checkpoint is a run of its own, on {corpus}, with β trained at {beta_rate:.4g}"
               + (f", {note} {main_rate:.4g}"
                  + (" (before the rates were scaled to our batch)" if beta_rate > main_rate else "")
                  + f": a different model, so these numbers do not compare with the {main_corpus} runs' above.")))


def answer_paragraph(sweep: dict[str, dict], deep_r2: float, threshold: float, bank_mean: float,
                     lang: str | None = None) -> str:
    """The chapter's closing answer, three numbers: the margin's range across the rates, the deep inputs' x0-R²,
    and the bank's loss change. ``lang``: "en" or "ko" (None: the running notebook's edition)."""
    m = {arm: mean(a["margin_q"]) for arm, a in sweep.items()}
    flips = len({_above(x) for x in m.values()}) > 1
    lo, hi = min(m, key=m.get), max(m, key=m.get)
    if resolve_language(lang) == "ko":
        first = ("우리의 8층 모델에서 x0을 가장 많이 다시 읽는 경로는 계수의 학습률이 정합니다. V의 x0 비중에서 "
                 f"Q의 비중을 뺀 값은 {_diff(m[lo])}({lo})부터 {_diff(m[hi])}({hi})까지입니다"
                 if flips else
                 f"우리의 8층 모델에서 V의 x0 비중은 모든 학습률에서 Q의 비중보다 "
                 f"{'큽니다' if _above(m[lo]) else '크지 않습니다'}({_diff(m[lo])}~{_diff(m[hi])})")
        premise = "이미 대부분 토큰 정체성" if deep_r2 >= threshold else "대부분 문맥"
        return (f"{first}. 여기서는 질문의 전제가 약합니다. 깊은 층의 입력이 {premise}이므로"
                f"({deep_r2:.2f} x0-R²) 어느 경로도 x0이 많이 필요하지 않고, 제거해도 비용이 작습니다. 논문의 설계가 "
                f"주는 이득은 드러납니다. 토큰별 표에서 가져온 깊은 층의 값은 손실을 {abs(bank_mean):.3f} nats "
                f"{'낮춥니다' if bank_mean < 0 else '높입니다'}. 깊은 층은 어느 경로로 x0을 다시 읽을까요? 여기서의 "
                "답은 이렇습니다. "
                + ("V가 Q보다 x0을 더 읽는다는 발표된 순서가 어떤 학습률에서는 나타나고 어떤 학습률에서는 나타나지 않으므로, 우리 "
                   "실행은 그것을 확인하지도 반박하지도 않습니다." if flips else
                   "순서는 모든 학습률에서 같지만, 전제가 이만큼 약하니 큰 의미는 없습니다."))
    first = ("In our 8-layer model the path that re-reads x0 most is chosen by the coefficients' learning rate: "
             f"V's x0 share minus Q's runs from {_diff(m[lo])} (at {lo}) to {_diff(m[hi])} (at {hi})"
             if flips else
             f"In our 8-layer model V's x0 share {'exceeds' if _above(m[lo]) else 'stays below'} Q's at every "
             f"rate ({_diff(m[lo])} to {_diff(m[hi])})")
    premise = ("already mostly token identity" if deep_r2 >= threshold else "mostly context")
    return (f"{first}. The question's premise is weak here: the deep layers' inputs are {premise} "
            f"({deep_r2:.2f} x0-R²), so no path needs much x0 and removing it costs little. What the paper's "
            f"design buys does show: deep values taken from a per-token table "
            f"{'lower' if bank_mean < 0 else 'raise'} the loss by {abs(bank_mean):.3f} nats. Through which path do "
            "deep layers re-read x0? Here: "
            + ("the published V-over-Q order appears at some rates and not others, so our runs neither confirm "
               "nor refute it." if flips else
               "the order is the same at every rate, but with the premise this weak it counts for little."))


def mean_sd_text(values: Sequence[float], fmt: str = ".3f") -> str:
    """``"0.317 ± 0.040"``: mean ± sd over seeds."""
    m, sd = mean_sd(values)
    return f"{m:{fmt}} ± {sd:{fmt.lstrip('+')}}"       # a spread has no sign


def token_tables_sentence(designs: dict, lang: str | None = None) -> str:
    """The take-away of the table-matched pair of ``vrs-edu reproduce production-designs`` (value embeddings into V,
    per-layer embeddings into the stream, tables of the same size): which one ended lower on how many seeds, and
    the parameters both add to the baseline (from the stored result). ``lang``: "en" or "ko" (None: the running
    notebook's edition)."""
    rec = {v["name"]: v for v in designs["verdicts"]}["value_embed_needs_v"]   # value_embed − layer_embed, per seed
    values = rec["values"]
    lower_v = sum(v < 0 for v in values)
    n = len(values)
    base = designs["designs"]["baseline"]["n_params"]
    added = [designs["designs"][d]["n_params"] - base for d in ("value_embed", "layer_embed")]
    if resolve_language(lang) == "ko":
        if lower_v == n - lower_v:
            lead = (f"두 설계는 각각 시드 {n}개 중 {lower_v}개에서 더 낮게 끝났습니다. 이 장난감 모델에서는 어느 "
                    "경로도 표를 더 돕지 않았습니다")
        else:
            v_wins = lower_v > n - lower_v
            who = "value embeddings" if v_wins else "층별 임베딩"
            lead = (f"{attach(who, '이/가')} 시드 {n}개 중 {max(lower_v, n - lower_v)}개에서 더 낮게 끝났습니다. "
                    "이 장난감 모델에서는 같은 표가 "
                    f"{'스트림보다 V를 통해' if v_wins else 'V보다 스트림을 통해'} 더 도움이 되었습니다")
        # % reads 퍼센트, so 를 (vrs_edu.i18n.korean's attach reads the digit before a trailing %)
        return (f"{lead}. 둘 다 기준선의 파라미터 {base:,}개에 {min(added) / base:.0%}–{max(added) / base:.0%}를 "
                "더합니다.")
    if lower_v == n - lower_v:
        lead = f"Each ended lower on {lower_v} of {n} seeds: in this toy neither path helped the table more"
    else:
        v_wins = lower_v > n - lower_v
        lead = (f"{'Value' if v_wins else 'Per-layer'} embeddings ended lower on {max(lower_v, n - lower_v)} of {n} "
                f"seeds: in this toy the same table helped more "
                f"{'through V than through the stream' if v_wins else 'through the stream than through V'}")
    return (f"{lead}. Both add {min(added) / base:.0%}–{max(added) / base:.0%} to the baseline's {base:,} "
            f"parameters.")


def verdict_cell(v, lang: str | None = None) -> str:
    """A declared test's verdict for a table beside its ×1 interval: the verdict (with its would-be verdict), and
    for a test swept over the learning rates, which verdict each rate gave, since the verdict combines them: a ×1
    interval clear of 0 reads "undecided" when another rate is out of regime (``undecided across the rates: ×1 out
    of regime (would be: reproduced); ×0.25 …; ×4 reproduced``). ``v``: a :class:`~vrs_edu.lab.results.Verdict`."""
    if resolve_language(lang) == "ko":
        if not v.arms:
            return label(v.verdict, v.would_be, "ko")
        return (f"학습률에 걸쳐 {verdict_word(v.verdict, 'ko')}: "
                + "; ".join(f"{arm} {label(a.verdict, a.would_be, 'ko')}" for arm, a in v.arms))
    if not v.arms:
        return v.verdict_words
    return f"{v.verdict} across the rates: " + "; ".join(f"{arm} {a.verdict_words}" for arm, a in v.arms)


# ------------------------------------------------------------------ the notebook's remaining printed lines, both editions
CORPUS_KO = {"kjv": "King James Bible(kjv)", "python-docs": "Python 문서(python-docs)"}


def _was_ko(word: str) -> str:
    """``word`` + 이었습니다/였습니다 (the past of 이다 after a consonant or a vowel, as read aloud)."""
    return word + ("이었습니다" if particle(word, "이다/다") == "이다" else "였습니다")


def sweep_title(corpus: str, layers: Sequence[int], n_seeds: int, lang: str | None = None) -> str:
    """The rate-sweep figure's title: ``kjv: x0 layers [6, 7], 5 seeds``."""
    if resolve_language(lang) == "ko":
        return f"{corpus}: x0 층 {list(layers)}, 시드 {n_seeds}개"
    return f"{corpus}: x0 layers {list(layers)}, {n_seeds} seeds"


def designs_sentence(designs: dict, against: str, lang: str | None = None) -> str:
    """The table-matched pair's declared test (value embeddings through V against a table of the same size written
    into the stream, ``against``), as :func:`vrs_edu.viz.prose.declared_result` words it."""
    result = declared_result(designs, "value_embed_needs_v", against=against, lang=lang)
    if resolve_language(lang) == "ko":
        return f"같은 크기의 표를 스트림 대신 V로 넣으면: {result}."
    return f"Through V rather than the stream, the same table size: {result}."


def recall_context_sentence(deep_r2: float, lang: str | None = None) -> str:
    """How much of the recall task's deep inputs is token identity (x0-R²); a sentence that ends in a space, the
    recall sentence follows it."""
    if resolve_language(lang) == "ko":
        return f"이 과제에서는 깊은 층 입력 분산의 {deep_r2:.2f}가 토큰 정체성으로 설명됩니다(x0-R²). "
    return f"The deep inputs are {deep_r2:.2f} token identity (x0-R²). "


def projection_check_sentence(diff: float, layer: int = 2, lang: str | None = None) -> str:
    """The learner's projection against the toy model's own v projection: the largest difference."""
    if resolve_language(lang) == "ko":
        return f"직접 만든 투영과 층 {layer}에서 모델 자신의 v 투영의 가장 큰 차이: {diff:.1e}."
    return f"Your projection against the model's own v projection in layer {layer}: largest difference {diff:.1e}."


def table_swap_sentence(n_tokens: int, n_ids: int, vocab_size: int, r2: dict[int, float], clean: float,
                        swapped: float, bank_mean: float, lang: str | None = None) -> str:
    """The per-token table fitted to a trained qkv model's V (``r2``: layer -> R² it explains), the held-out loss
    with the table put in place of V (``clean`` → ``swapped``), and the bank models' loss change from the baseline."""
    if resolve_language(lang) == "ko":
        fits = attach(", ".join(f"층 {l}에서 V의 R² = {v:.2f}" for l, v in r2.items()), "을/를")
        return (f"학습 토큰 {n_tokens:,}개(토큰 id {vocab_size:,}개 중 {n_ids:,}개)로 맞춘 토큰별 표는 {fits} "
                f"설명합니다. 두 층 모두에서 V 자리에 넣으면 검증 손실이 {swapped - clean:+.3f} nats 바뀝니다"
                f"({clean:.3f} → {swapped:.3f}). 처음부터 표를 가지고 학습한 `bank` 모델은 기준선과 "
                f"{bank_mean:+.3f} nats 차이로 끝났습니다.")
    return (f"On {n_tokens:,} training tokens ({n_ids:,} of the {vocab_size:,} token ids) the per-token table explains "
            + " and ".join(f"R² = {v:.2f} of V in layer {l}" for l, v in r2.items())
            + f". Put in place of V in both layers, it changes the held-out loss by {swapped - clean:+.3f} "
            f"nats ({clean:.3f} → {swapped:.3f}); the `bank` models, trained with a table from the start, "
            f"ended {bank_mean:+.3f} nats from the baseline.")


def coefficients_match_sentence(apart: float, seed: int, lang: str | None = None) -> str:
    """The widget's checkpoint against the stored run of the same seed: the largest coefficient difference."""
    if resolve_language(lang) == "ko":
        return f"이 체크포인트의 계수는 저장된 시드 {seed} 실행의 계수와 {apart:.0e} 이내로 같습니다."
    return f"Its coefficients lie within {apart:.0e} of the stored seed-{seed} run's."


def next_chapter_sentence(lang: str | None = None) -> str:
    """The chapter's last line: where chapter 05 goes."""
    return in_language("Chapter 05 turns the depth axis itself into something a layer can attend over.",
                       "05장은 깊이 축 자체를 층이 어텐션할 수 있는 대상으로 바꿉니다.", lang)


def preconditions_line(holds_by_name: dict[str, bool], lang: str | None = None) -> str:
    """``Preconditions: `sub_epoch` holds; `deep_context` fails.`` (``holds_by_name``: name -> whether it holds)."""
    if resolve_language(lang) == "ko":
        return ("전제 조건: " + "; ".join(f"`{n}` {'성립' if h else '불성립'}" for n, h in holds_by_name.items())
                + ".")
    return "Preconditions: " + "; ".join(f"`{n}` {'holds' if h else 'fails'}" for n, h in holds_by_name.items()) + "."


def verdicts_table(rows: Sequence, lang: str | None = None) -> str:
    """The declared tests as a Markdown table: name, the ×1 interval, :func:`verdict_cell`."""
    ko = resolve_language(lang) == "ko"
    head = (["선언된 검정", "평균 [95% 신뢰구간] (×1)", "판정"] if ko else
            ["declared test", "mean [95% CI] (×1)", "verdict"])
    return table(head, [[f"`{r.test.name}`", r.interval(), verdict_cell(r, lang=lang)] for r in rows])


# ---------------------------------------------------------------------------------------------------------------
# Appendix 04's sentences, tables and titles (notebooks/04a_bank_of_values_evidence.py), in each edition.

#: The parts of the recipe's results (corpus, recall task) as the Korean edition names them.
PARTS_KO = {"corpus": "말뭉치", "recall": "회상 과제"}


def part_name(part: str, lang: str | None = None) -> str:
    """A part of the results (``"corpus"``, ``"recall"``) as the edition names it."""
    return PARTS_KO.get(part, part) if resolve_language(lang) == "ko" else part


def appendix_corpus_sentence(corpus: str, layers: Sequence[int], steps: int, batch_size: int, qk_norm,
                             epochs: float, gap: dict, rates: dict[str, tuple[float, float]],
                             lang: str | None = None) -> str:
    """The runs' set-up: corpus, x0 layers, steps, the epochs read, the baseline's final losses (``gap``:
    ``train``, ``val``) and each rate arm's coefficient rates (``rates``: arm -> (lr of β and γ, lr of α))."""
    rate_list = "; ".join(f"{arm} {bg:.4g} / {a:.3g}" for arm, (bg, a) in rates.items())
    if resolve_language(lang) == "ko":
        return (f"말뭉치 {corpus}: x0 층 {layers}, 시퀀스 {batch_size}개 배치로 {steps} 스텝, QK-norm {qk_norm}. "
                f"실행 하나는 {epochs:.2f} 에폭을 읽습니다. 기준선의 최종 손실은 학습 텍스트에서 {gap['train']:.3f}, "
                f"검증에서 {gap['val']:.3f} nats입니다. 계수 학습률(β와 γ의 AdamW lr / α의 lr): {rate_list}.")
    return (f"Corpus {corpus}: x0 layers {layers}, "
            f"{steps} steps of {batch_size} sequences, QK-norm "
            f"{qk_norm}; a run reads {epochs:.2f} epochs; "
            f"the baseline's final loss on training text {gap['train']:.3f}, validation "
            f"{gap['val']:.3f} nats. "
            "Coefficient rates (AdamW lr of β and γ / of α): " + rate_list + ".")


def premises_table(ch04_r2: float, ch04_threshold: float, ch05_r2: float, ch05_threshold: float,
                   lang: str | None = None) -> str:
    """The stored x0-R² of the two chapters' premises against their threshold."""
    if resolve_language(lang) == "ko":
        head = ["장", "잰 입력", "x0-R²", "전제", "성립?", "전제가 뜻하는 것"]
        what = ("기준선, x0 층의 q/k/v 입력", "잔차 기준선, 마지막 3분의 1의 입력",
                "대부분 문맥: x0을 다시 읽을 필요가 있을 수 있음")
    else:
        head = ["chapter", "inputs measured", "x0-R²", "premise", "holds?", "what it stands for"]
        what = ("baseline, x0 layers' q/k/v inputs", "residual baseline, last third's inputs",
                "mostly context: re-reading x0 could be needed")
    return table(head, [["04", what[0], f"{ch04_r2:.3f}", f"< {ch04_threshold:g}",
                         holds(ch04_r2, ch04_threshold, lang), what[2]],
                        ["05", what[1], f"{ch05_r2:.3f}", f"< {ch05_threshold:g}",
                         holds(ch05_r2, ch05_threshold, lang), what[2]]])


def ablation_sentence(worst: dict[str, float], base_sd: float, largest: float, lang: str | None = None) -> str:
    """The substitution ablation's largest cost per path in the x0 layers against the baseline's seed spread:
    below it (``largest < base_sd``) every path tolerates x0, else the path with the largest cost tolerates it
    least."""
    costs = ", ".join(f"{s.upper()} {worst[s]:+.3f}" for s in "qkv")
    least = max(worst, key=worst.get).upper()
    if resolve_language(lang) == "ko":
        return (f"x0 층에서 교환의 비용은 많아야 {costs} nats이고, 기준선 손실의 시드 간 퍼짐은 {base_sd:.3f} nats입니다. "
                + ("이 층들은 어느 경로에서든 토큰 정체성을 견딥니다." if largest < base_sd else
                   f"이 층들에서는 {least} 경로가 교환을 가장 못 견딥니다."))
    return ("In the x0 layers the swap costs at most " + costs
            + f" nats, against a seed-to-seed spread of the baseline's loss of {base_sd:.3f} nats: "
            + "these layers "
            + ("tolerate the token identity in any path." if largest < base_sd else
               f"tolerate it least in {least}."))


def ablation_rows_table(abl: dict, lang: str | None = None) -> str:
    """The substitution ablation per layer: each path's input replaced by x0, mean ± sd of the loss change."""
    word = "입력" if resolve_language(lang) == "ko" else "input"
    return table([in_language("layer", "층", lang), *(f"{s} {word} := x0" for s in "qkv")],
                 [[l, *(f"{abl[s][i][0]:+.3f} ± {abl[s][i][1]:.3f}" for s in "qkv")]
                  for i, l in enumerate(abl["layers"])])


def rates_table(rows: list, lang: str | None = None) -> str:
    """Per rate arm: β_v's rate, V's share and margins, the last layer's |β_v| and qkv's loss against the
    baseline (``rows`` as the appendix builds them)."""
    ko = resolve_language(lang) == "ko"
    return table([in_language("rate", "학습률", lang), "β_v lr", "share_v", "v − q", "v − k",
                  "마지막 층 |β_v|" if ko else "|β_v| last", "qkv − 기준선 (nats)" if ko else "qkv − base (nats)"],
                 rows)


def coefficients_table(n_seeds: int, names: Sequence[str], rows: list, lang: str | None = None
                       ) -> tuple[str, str]:
    """The final coefficients at ×1 per x0 layer (``rows``: layer, then one cell per name), with the line above."""
    if resolve_language(lang) == "ko":
        return f"×1에서의 최종 계수, 시드 {n_seeds}개의 평균 ± 표준편차:", table(["층", *names], rows)
    return f"Final coefficients at ×1, mean ± sd over {n_seeds} seeds:", table(["layer", *names], rows)


def trajectories_title(part: str, lang: str | None = None) -> str:
    """The β-trajectory figure's title for one part (``"corpus"`` or ``"recall"``)."""
    if resolve_language(lang) == "ko":
        return f"{part_name(part, lang)}, ×1: 학습 중의 β (음영: 정체 창)"
    return f"{part}, ×1: β during training (shaded: plateau window)"


def plateau_line(part: str, plateau: dict, lang: str | None = None) -> str:
    """Whether β_v stopped moving before the decay: ``plateau`` has ``reached``, ``of``, ``per_run`` (each run's
    change in the window / total change, per layer) and ``tol``."""
    per_seed = "; ".join(" ".join(f"{x:.3f}" for x in run) for run in plateau["per_run"])
    if resolve_language(lang) == "ko":
        return (f"{part_name(part, lang)}: (층, 시드) 계열 {plateau['of']}개 중 {plateau['reached']}개에서 β_v가 "
                f"정체에 이르렀습니다. 창 안의 변화 / 전체 변화, 시드별: {per_seed} (정체: ≤ {plateau['tol']}).")
    return (f"{part}: β_v plateau reached in {plateau['reached']} of {plateau['of']} (layer, seed) "
            "series; change in "
            "the window / total change, per seed: " + per_seed + f" (plateau: ≤ {plateau['tol']}).")


def x0_plateau_line(fractions: dict[str, float], lang: str | None = None) -> str:
    """The precondition ``x0_plateaued``: per rate arm, the fraction of the three paths' β trajectories that
    plateaued."""
    listed = ", ".join(f"{arm} {f:.2f}" for arm, f in fractions.items())
    if resolve_language(lang) == "ko":
        return f"x0_plateaued (세 경로 모두의 β, 학습률별): 정체한 궤적의 비율 {listed} (필요: > 0.5)."
    return ("x0_plateaued (all three paths' β, at each rate): " + listed
            + " of the trajectories plateaued (needs > 0.5).")


def need_tables(costs: list, layers: Sequence[int], pressure: list, r2: list, lang: str | None = None
                ) -> tuple[str, str, str]:
    """The removal costs per rate, the baseline's gradient on β per x0 layer and the x0-R² of the x0 layers'
    inputs per variant (rows as the appendix builds them), each with its header."""
    if resolve_language(lang) == "ko":
        return (table(["학습률", "비용 q", "비용 k", "비용 v"], costs),
                table(["경로", *(f"∂L/∂β 층 {l}" for l in layers)], pressure),
                table(["변형", "x0-R² q 입력", "k 입력", "v 입력"], r2))
    return (table(["rate", "cost q", "cost k", "cost v"], costs),
            table(["path", *(f"∂L/∂β layer {l}" for l in layers)], pressure),
            table(["variant", "x0-R² q input", "k input", "v input"], r2))


def gamma_table(rows: list, lang: str | None = None) -> str:
    """γ per layer of the variants that have one (mean ± sd over seeds)."""
    if resolve_language(lang) == "ko":
        return table(["변형", "층별 γ (평균 ± 표준편차)"], rows)
    return table(["variant", "γ per layer (mean ± sd)"], rows)


def recall_reference_sentence(ref: dict, finals: dict[str, tuple[float, float]], lang: str | None = None) -> str:
    """The no-lookup reference and each arm's final loss and accuracy (``finals``: variant -> (loss, accuracy))."""
    if resolve_language(lang) == "ko":
        return (f"조회 없는 기준값: 손실 {ref['loss']:.3f} nats, 정확도 {ref['acc']:.3f}; "
                + "; ".join(f"{v} (×1, 시드 평균) 손실 {l:.3f}, 정확도 {a:.3f}" for v, (l, a) in finals.items()) + ".")
    return (f"No-lookup reference: loss {ref['loss']:.3f} nats, accuracy {ref['acc']:.3f}; "
            + "; ".join(f"{v} (×1, mean of seeds) loss {l:.3f}, accuracy "
                        f"{a:.3f}" for v, (l, a) in finals.items()) + ".")


def recall_seeds_table(rows: list, lang: str | None = None) -> str:
    """Per seed of the recall ``qkv`` model at ×1: whether it learned the lookup (a bool in the row's second
    cell), its steps to learn, loss, shares and margins."""
    ko = resolve_language(lang) == "ko"
    yes = {True: "예", False: "아니요"} if ko else {True: "yes", False: "no"}
    rows = [[r[0], yes[bool(r[1])], *r[2:]] for r in rows]
    if ko:
        return table(["시드", "조회를 배움", "배우기까지 스텝 (baseline, qkv)", "손실", "비중 q", "비중 k", "비중 v",
                      "v − q", "v − k"], rows)
    return table(["seed", "learned lookup", "steps to learn (baseline, qkv)", "loss", "share q", "share k",
                  "share v", "v − q", "v − k"], rows)


def sooner_sentence(mean: float, ci: tuple[float, float], lang: str | None = None) -> str:
    """qkv − baseline steps to learn on the same seed: a description, not a declared test."""
    if resolve_language(lang) == "ko":
        return (f"같은 시드에서 배우기까지 걸린 스텝의 qkv − baseline: {mean:+.0f} [{ci[0]:+.0f}, {ci[1]:+.0f}] "
                "(선언되지 않음: 판정이 아니라 새 검정을 위한 단서입니다).")
    return (f"qkv − baseline steps to learn, same seed: {mean:+.0f} [{ci[0]:+.0f}, "
            f"{ci[1]:+.0f}] (not declared: a lead for a new test, not a verdict).")


def embeddings_bullets(designs: dict | None, lang: str | None = None) -> str:
    """The production designs' two token tables, each with its declared result against the baseline."""
    ve, le = (declared_result(designs, n, lang=lang) for n in ("value_embed_loss", "layer_embed_loss"))
    if resolve_language(lang) == "ko":
        return f"* **값 임베딩** (V로): {ve}.\n* **층별 임베딩** (스트림으로): {le}."
    return (f"* **value embeddings** (into V): {ve}.\n"
            "* **per-layer embeddings** (into the stream): "
            f"{le}.")


def widget_model_sentence(betas: dict[str, list[float]], added: dict[str, dict], lang: str | None = None) -> str:
    """The widget's checkpoint: its learned β per x0 layer, and what adding 0.5 to β of a path moves (``added``:
    path -> ``beta_shift_readout`` result with ``delta`` and ``moved``)."""
    learned = "; ".join(f"{s} {[round(b, 2) for b in betas[s]]}" for s in "qkv")
    loss = ", ".join(f"{added[s]['delta']:+.4f} ({s})" for s in added)
    moved = ", ".join(f"{sum(added[s]['moved']) / len(added[s]['moved']):.1%} ({s})" for s in added)
    if resolve_language(lang) == "ko":
        return (f"위젯의 체크포인트에서 x0 층별로 학습된 β: {learned}. β에 0.5를 더하면 손실은 {loss} nats "
                f"움직이고, 어텐션 질량은 {moved}만큼 옮겨 갑니다.")
    return ("The widget's checkpoint, learned β per x0 layer: " + learned
            + ". Adding 0.5 to β moves the loss by " + loss + " nats and " + moved + " of the attention mass.")


def scale_sentence(n_layers: int, n_params: int, tokens: int, steps: int, paper: dict, ours_ratio: float,
                   official_ratio: float, vocab_size: int, lang: str | None = None) -> str:
    """Our scale against the paper's (``paper``: ``layers``, ``params``, ``tokens``) and β's rate over the
    matrices' rate, ours against the official recipe's."""
    if resolve_language(lang) == "ko":
        return (f"우리: {n_layers}층, 파라미터 {n_params:,}개, 토큰 {tokens:,}개, {steps} 스텝. 논문: "
                f"{paper['layers']}층, 파라미터 {paper['params'] / n_params:.0f}배, 토큰 "
                f"{paper['tokens'] / tokens:,.0f}배. 행렬의 학습률 대비 β의 학습률: 우리 {ours_ratio:.1f}×, 공식 레시피 "
                f"{official_ratio:.0f}× (0.5 / 0.02, 둘 다 같은 비율로 조정). 우리의 단어 어휘(이 장의 질문 2를 위해): "
                f"항목 {vocab_size:,}개.")
    return (f"Ours: {n_layers} layers, {n_params:,} parameters, {tokens:,} tokens, "
            f"{steps} steps; the paper: {paper['layers']} layers, "
            f"{paper['params'] / n_params:.0f}× the parameters, {paper['tokens'] / tokens:,.0f}× the "
            f"tokens. β's rate over the matrices' rate: ours {ours_ratio:.1f}×, the official recipe "
            f"{official_ratio:.0f}× (0.5 / 0.02, both scaled alike). "
            f"Our word vocabulary (for the chapter's question 2): {vocab_size:,} entries.")


def ledger_heading(name: str, seen: bool, lang: str | None = None) -> str:
    """A results file's heading in the run ledger, saying when the ledger has no run of it yet."""
    if seen:
        return f"**{name}**"
    return f"**{name}**" + (": 아직 실행 기록에 없음" if resolve_language(lang) == "ko" else ": not in the ledger yet")


def swept_clauses(rows, lang: str | None = None) -> str:
    """The appendix's line on the swept tests: every judged row with arms (a test declared over the rate sweep),
    clause by clause, its verdict across the arms (:meth:`~vrs_edu.lab.results.Verdict.sentence`), in ``lang``
    (None: the running notebook's edition)."""
    lang = resolve_language(lang)
    head = "스윕한 검정, 조건별로: " if lang == "ko" else "The swept tests, clause by clause: "
    return head + " ".join(f"**{r.test.name}**: {r.sentence(lang=lang)}." for r in rows if r.arms is not None)


# Why a description is not judged, in Korean, keyed by the English the recipe records (premises.LM_TOYS_SHORT).
WHY_KO = {LM_TOYS_SHORT: f"판정하지 않음: 그 전제(깊은 입력이 대부분 문맥, x0-R² < {DEEP_X0_R2:g})가 모든 장난감 "
                         "언어 모델에서 성립하지 않음",
          LM_TOYS_SHORT + "; the recall task judges it":
              f"판정하지 않음: 그 전제(깊은 입력이 대부분 문맥, x0-R² < {DEEP_X0_R2:g})가 모든 장난감 언어 모델에서 "
              "성립하지 않음; 회상 과제가 판정함"}


def described_clauses(descriptions, lang: str | None = None) -> str:
    """The appendix's line on the need and pressure numbers, which are described, not judged (their premise fails
    on the language-model toys): each :class:`~vrs_edu.lab.premises.Description` by name, its interval per arm and
    why it is not judged, in ``lang`` (None: the running notebook's edition).

    Raises:
        KeyError: in Korean, a reason with no Korean in :data:`WHY_KO` (it must be translated, not shown in English).
    """
    if resolve_language(lang) != "ko":
        return "The need and pressure numbers (descriptions): " + " ".join(f"**{d.name}**: {d}." for d in descriptions)
    parts = []
    for d in descriptions:
        if d.why not in WHY_KO:
            raise KeyError(f"description reason {d.why!r} has no Korean: add it to WHY_KO")
        if d.arms:
            numbers = "; ".join(f"{a} {x.interval()}" for a, x in d.arms)
            parts.append(f"**{d.name}**: 조건별 서술 ({numbers}): {WHY_KO[d.why]}.")
        else:
            parts.append(f"**{d.name}**: {d.interval(3, '95% 신뢰구간 ')}: 서술 ({WHY_KO[d.why]}).")
    return "필요와 압력 수치(판정하지 않는 서술): " + " ".join(parts)
