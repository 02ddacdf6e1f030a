"""The course's four questions, answered from its own result files (chapter 06).

Each answer is computed from a ``data/results/*.json`` file written by a ``vrs-edu reproduce`` command — never typed
— and cites the chapter that measured it. A missing file gives an answer that names the command that makes it.

1. **QK vs V** — does a deep layer need context in its queries and keys more than in its values? (chapters 02, 04:
   the context-free substitution ablation on trained baselines, ``bank-of-values``).
2. **Value residual** — does mixing V_1 into later layers lower the loss, keep attention less concentrated, reduce
   over-smoothing? (chapter 03, ``value-residual``).
3. **Bank of values** — through which path do deep layers re-read x0, and can V become a token lookup? (chapter 04,
   ``bank-of-values``).
4. **Depth as a sequence** — does a selective read over depth beat the residual sum, and do the routers' V inputs
   read the embedding while Q and K read recent layers? (chapter 05, ``depth-mixers``).
"""
from __future__ import annotations

import math
from pathlib import Path

from .experiments import load_results
from .recipes.bank_of_values import claims as bov_claims
from .recipes.value_residual import claims as vr_claims

QUESTIONS = {
    1: ("QK vs V", "Does a deep layer need context in Q and K more than in V?", "04", "bank-of-values"),
    2: ("value residual", "What does mixing V_1 into later layers change?", "03", "value-residual"),
    3: ("bank of values", "Through which path do deep layers re-read x0?", "04", "bank-of-values"),
    4: ("depth as a sequence", "Can the residual stream be a selective read over depth?", "05", "depth-mixers"),
}


def _ci(stat: dict) -> str:
    lo, hi = stat["ci"]
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{stat['mean']:+.3f} (n = {stat['n']}, no interval)"
    return f"{stat['mean']:+.3f} [95% CI {lo:+.3f}, {hi:+.3f}], n = {stat['n']}"


def _claim(summary: dict, key: str) -> str:
    c = summary.get(key)
    if c is None:
        return f"{key}: not in the result file"
    stat = f" = {_ci(c['stat'])}" if "stat" in c else ""
    return f"{c['test']}{stat} → {c['verdict']}"


def _corpus_claims(result: dict, claims) -> dict:
    """The corpus claims, recomputed from the saved runs with the recipe's current ``claims`` tests (as chapters 03
    and 04 do, so the answers and the chapters agree), or the summary the run stored when the file has no runs."""
    if "runs" not in result.get("corpus", {}):
        return result["summary"]["corpus"]
    return claims(result["corpus"])


def answer_qk_vs_v(bov: dict) -> list[str]:
    s = _corpus_claims(bov, bov_claims)
    return [_claim(s, "v_tolerates_x0_substitution")]


def answer_value_residual(vr: dict) -> list[str]:
    s = _corpus_claims(vr, vr_claims)
    return [_claim(s, k) for k in ("loss_gain_final", "loss_gain_before_decay", "entropy_higher",
                                   "oversmoothing_lower", "lambda_1_grows_with_depth") if k in s]


def answer_bank_of_values(bov: dict) -> list[str]:
    s = _corpus_claims(bov, bov_claims)
    return [_claim(s, k) for k in ("beta_v_exceeds_beta_q_and_beta_k", "beta_v_above_paper_magnitude",
                                   "beta_q_near_zero", "beta_k_near_zero", "substitute_v_loss_gain_final",
                                   "bank_loss_gain_final") if k in s]


def answer_depth(dm: dict) -> list[str]:
    from .recipes.depth_mixers import loss_table, mean_weights, source_share

    rows = [r for r in loss_table(dm) if r["variant"] != "residual"]
    best = min(rows, key=lambda r: r["delta"])
    lo, hi = best["delta_ci"]
    better = [r["variant"] for r in rows if not math.isnan(r["delta_ci"][1]) and r["delta_ci"][1] < 0]
    out = [f"best mixer {best['variant']}: Δ final val loss vs residual {best['delta']:+.3f} "
           f"[95% CI {lo:+.3f}, {hi:+.3f}], {best['n_better']}/{best['n_seeds']} seeds better; "
           f"mixers whose interval lies below 0: {', '.join(better) or 'none'}"]
    L = dm["configs"]["residual"]["model"]["n_layers"]
    rows_deep = list(range(L - L // 3, L))
    n_v = 0
    routers = [r for r in ("dca", "mudd", "vertical") if r in dm["runs"]]
    for name in routers:
        mats = mean_weights(dm, name)
        sh = {s: source_share(mats[s], rows_deep, 0) for s in "qkv"}
        n_v += sh["v"] > max(sh["q"], sh["k"])
        out.append(f"{name}: share of the deep reads' weight on the embedding — "
                   + ", ".join(f"{s.upper()} {sh[s]:.3f}" for s in "qkv"))
    out.append(f"V's input reads the embedding more than both Q's and K's in {n_v} of {len(routers)} routers")
    return out


ANSWERERS = {1: answer_qk_vs_v, 2: answer_value_residual, 3: answer_bank_of_values, 4: answer_depth}


def course_answers(out_dir: str | Path | None = None) -> list[dict]:
    """One entry per question: ``{"n", "title", "question", "chapter", "command", "lines", "missing"}``; ``lines``
    are the measured answers (empty when the result file is missing, ``missing`` then holds the error text)."""
    answers = []
    cache: dict[str, dict | Exception] = {}
    for n, (title, question, chapter, recipe) in QUESTIONS.items():
        if recipe not in cache:
            try:
                cache[recipe] = load_results(recipe, out_dir=out_dir)
            except FileNotFoundError as e:
                cache[recipe] = e
        res = cache[recipe]
        entry = {"n": n, "title": title, "question": question, "chapter": chapter,
                 "command": f"vrs-edu reproduce {recipe}", "lines": [], "missing": None}
        if isinstance(res, Exception):
            entry["missing"] = str(res)
        else:
            entry["command"] = res.get("command", entry["command"])
            entry["wall_time_s"] = res.get("wall_time_s")
            entry["lines"] = ANSWERERS[n](res)
        answers.append(entry)
    return answers
