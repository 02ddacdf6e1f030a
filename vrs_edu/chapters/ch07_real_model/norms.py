"""``vrs-edu reproduce encoder-norms``: attention is not only a weight, asked of MiniLM's 6 layers.

Kobayashi et al. (EMNLP 2020, arXiv 2004.10102) write an attention layer's output at token i as Σ_h Σ_j α_hij
f_h(x_j) + b_O, f_h(x_j) = v_h(x_j) W_O^h (:mod:`vrs_edu.nn.attribution`), and read BERT two ways: by the weight α
(what QK computed) and by the norm ‖α f(x)‖ (the vector V and O make, weighted). Their findings, asked here of
all-MiniLM-L6-v2 (chapter 07's encoder, BERT's architecture at 6 layers), one prose sentence of the Python docs as
the unit of replication:

* **Special tokens** ([CLS], [SEP] and punctuation) take much of the weight but little of the norm: per layer, their
  share of the layer's norm-based map ‖Σ_h α_hij f_h(x_j)‖ (normalised per query) lies below their share of the
  weights mean_h α_hij. The claim needs its premise, that these tokens draw heavy attention (more than their share
  of the positions): where they do not, the test is *out of regime*.
* **α and ‖f(x)‖ are negatively correlated** (ibid., §4.3: frequent tokens get large weights and small vectors):
  per head, Spearman's ρ across a sentence's tokens between the weight a token receives (mean over queries) and the
  norm of its vector; the sentence's value is the mean over heads and layers.
* **The context-mixing ratio** (Kobayashi et al., EMNLP 2021, arXiv 2109.07152), with the residual and the post-LN
  counted, lies far below its weight-based reading 1 − mean_h α_ii (BERT-base: 18.8 % against 97.1 %), and is higher
  in early layers.

Computation in float32; nothing is trained; ~15 s on 2 threads.
"""
from __future__ import annotations

import string
import time

import torch
from scipy.stats import spearmanr

from vrs_edu.chapters.ch07_real_model.model import MODEL_NAME, RealModel, corpus_sentences, load_real_model
from vrs_edu.lab.analysis import DeclaredTest, Precondition, judge, layer_means, verdict_records
from vrs_edu.lab.experiments import Recipe
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.results import Verdict
from vrs_edu.nn.attribution import (attention_mixing, contributions, layer_norm_map, mixing_ratio, source_share,
                                    transformed_values, weight_mixing)
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.verdict_words import verdict_label
from vrs_edu.viz.prose import percent

NAME = "encoder-norms"
SETTINGS = {"n_sentences": 200, "min_tokens": 8, "max_tokens": 40, "batch_size": 25, "dtype": "float32"}
QUICK = {**SETTINGS, "n_sentences": 8, "batch_size": 4}
SPECIAL = ("[CLS]", "[SEP]")

# -- declared before the full run -------------------------------------------------------------------------------
SESOI_SHARE = 0.05   # 5 percentage points of a query's attribution
SESOI_RHO = 0.1      # a rank correlation of 0.1: Cohen's "small"
SESOI_DEPTH = 0.02   # 2 points of the mixing ratio between the first and the last layers
_SHARE_SRC = ("declared: 5 percentage points of a query's attribution (a share's difference below that changes no "
              "reading of a map)")
_RHO_SRC = "declared: ρ = −0.1, the smallest correlation Cohen (1988) calls small"
_DEPTH_SRC = "declared: 2 points of the mixing ratio (a tenth of BERT-base's 18.8 %, arXiv 2109.07152)"


def special_precondition(layer: int) -> Precondition:
    return Precondition(f"special_heavy_at_{layer}", f"at layer {layer} the special tokens draw more weight than "
                        "their share of the positions (the premise: heavy attention to them)", "their weight share "
                        "− their share of the positions (mean over sentences)", "positive", 0.0)


def special_test(layer: int) -> DeclaredTest:
    return DeclaredTest(
        f"special_norm_below_weight_{layer}", "heavy attention to [CLS], [SEP] and punctuation goes to small vectors "
        "(Kobayashi et al., arXiv 2004.10102, §4.2): their norm share lies below their weight share", f"per "
        f"sentence: norm share − weight share of the special tokens, layer {layer}", "the same sentence's weight "
        "share", "negative", 0.0, "special", -SESOI_SHARE, _SHARE_SRC, requires=(f"special_heavy_at_{layer}",))


CORRELATION_TEST = DeclaredTest(
    "alpha_norm_negative", "α and ‖f(x)‖ are negatively correlated (Kobayashi et al., arXiv 2004.10102, §4.3)",
    "per sentence: Spearman's ρ across its tokens of received weight and ‖f_h(x_j)‖, mean over heads and layers",
    "ρ = 0", "negative", 0.0, "correlation", -SESOI_RHO, _RHO_SRC)
MIXING_TEST = DeclaredTest(
    "mixing_below_weights", "counting V, O, the residual and the LayerNorm, a token takes far less from its context "
    "than the weights say (Kobayashi et al., arXiv 2109.07152: 18.8 % against 97.1 % in BERT-base)",
    "per sentence: mixing ratio r − (1 − mean_h α_ii), mean over layers and tokens", "the weight-based reading, "
    "same sentence", "negative", 0.0, "mixing", -SESOI_SHARE, _SHARE_SRC)
DEPTH_TEST = DeclaredTest(
    "mixing_early_above_late", "the mixing ratio is higher in early layers (Kobayashi et al., arXiv 2109.07152)",
    "per sentence: r (layers 0-1) − r (layers 4-5)", "the same sentence's last layers", "positive", 0.0, "depth",
    SESOI_DEPTH, _DEPTH_SRC)


def declared(n_layers: int) -> tuple[list[DeclaredTest], list[Precondition]]:
    tests = [special_test(l) for l in range(n_layers)] + [CORRELATION_TEST, MIXING_TEST, DEPTH_TEST]
    return tests, [special_precondition(l) for l in range(n_layers)]


# -- the measurement ------------------------------------------------------------------------------------------

def special_mask(real: RealModel, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, T) True at [CLS], [SEP] and tokens made only of punctuation, among the real tokens."""
    tok = real.tokenizer.id_to_token
    special = {i for i in ids.unique().tolist()
               if tok(i) in SPECIAL or all(ch in string.punctuation for ch in tok(i))}
    return torch.isin(ids, torch.tensor(sorted(special))) & mask


def _spearman_per_head(received: torch.Tensor, norms: torch.Tensor) -> float:
    """Mean over heads of Spearman's ρ between two (H, n) rows (NaN where a row is constant)."""
    rhos = [spearmanr(a, b).statistic for a, b in zip(received.tolist(), norms.tolist())]
    rhos = [r for r in rhos if r == r]
    return sum(rhos) / len(rhos) if rhos else float("nan")


@torch.no_grad()
def sentence_readings(real: RealModel, sentences: list[str]) -> dict[str, list[list[float]]]:
    """Per layer and sentence: ``weight_share`` and ``norm_share`` of the special tokens, ``position_share`` (their
    share of the tokens), ``mixing`` (post-LN), ``attention_mixing`` (by norms, without the residual and the LN; a
    description, no test reads it) and ``weight_mixing``, each a mean over the sentence's tokens, and
    ``rho`` (α received against ‖f(x)‖, mean over heads). Returns ``{reading: (L, B) lists}``."""
    ids, mask = real.encode(sentences)
    tr = real.model(ids, mask, trace=True).trace
    special = special_mask(real, ids, mask)
    n = mask.sum(dim=1)
    out = {k: [] for k in ("weight_share", "norm_share", "position_share", "mixing", "attention_mixing",
                           "weight_mixing", "rho")}
    for l, block in enumerate(real.model.blocks):
        attn = block.attn
        pattern = tr[f"blocks.{l}.attn.pattern"]                               # (B, H, T, T)
        f = transformed_values(tr[f"blocks.{l}.attn.v"], attn.o_proj.weight, attn.n_heads)
        c = contributions(pattern, f)
        out["weight_share"].append(source_share(pattern.mean(dim=1), special, mask))
        out["norm_share"].append(source_share(layer_norm_map(c), special, mask))
        out["position_share"].append(special.sum(dim=1) / n)
        r = mixing_ratio(c, tr[f"blocks.{l}.resid_pre"], bias=attn.o_proj.bias, post_ln=block.ln_attn)
        out["mixing"].append((r * mask).sum(dim=1) / n)
        out["attention_mixing"].append((attention_mixing(c) * mask).sum(dim=1) / n)
        out["weight_mixing"].append((weight_mixing(pattern) * mask).sum(dim=1) / n)
        received = (pattern * mask[:, None, :, None]).sum(dim=2) / n[:, None, None]   # (B, H, T): mean over queries
        norms = f.norm(dim=-1)                                                   # (B, H, T)
        out["rho"].append(torch.tensor([_spearman_per_head(received[b][:, mask[b]], norms[b][:, mask[b]])
                                        for b in range(len(sentences))]))
    return {k: torch.stack(v).tolist() for k, v in out.items()}


def measure(real: RealModel, sentences: list[str], batch_size: int) -> dict[str, list[list[float]]]:
    parts = [sentence_readings(real, sentences[i:i + batch_size]) for i in range(0, len(sentences), batch_size)]
    return {k: [sum((p[k][l] for p in parts), []) for l in range(len(parts[0][k]))] for k in parts[0]}


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-sentence values of every declared test, from a stored result."""
    per = result["per_layer"]
    L, n = len(per["weight_share"]), len(per["weight_share"][0])

    def mean_over(reading, layers):
        return [sum(per[reading][l][s] for l in layers) / len(layers) for s in range(n)]
    out = {f"special_norm_below_weight_{l}": [a - b for a, b in zip(per["norm_share"][l], per["weight_share"][l])]
           for l in range(L)}
    out["alpha_norm_negative"] = mean_over("rho", range(L))
    out["mixing_below_weights"] = [a - b for a, b in zip(mean_over("mixing", range(L)),
                                                         mean_over("weight_mixing", range(L)))]
    k = max(1, L // 3)
    out["mixing_early_above_late"] = [a - b for a, b in zip(mean_over("mixing", range(k)),
                                                            mean_over("mixing", range(L - k, L)))]
    return out


def facts(result: dict) -> dict[str, float]:
    per = result["per_layer"]
    return {f"special_heavy_at_{l}": sum(w - p for w, p in zip(per["weight_share"][l], per["position_share"][l]))
            / len(per["weight_share"][l]) for l in range(len(per["weight_share"]))}


def verdicts(result: dict) -> list[Verdict]:
    tests, pre = declared(len(result["per_layer"]["weight_share"]))
    return judge(tests, test_values(result), preconditions=pre, facts=facts(result))



@torch.no_grad()
def sentence_maps(real: RealModel, sentence: str, layer: int) -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """One sentence at one layer: its WordPiece tokens, the weight map mean_h α_hij (T, T) and the norm map
    ‖Σ_h α_hij f_h(x_j)‖ normalised per query (T, T): two readings of the same attention, rows summing to 1.

    Raises ValueError naming ``layer`` when the model has no such layer."""
    L = len(real.model.blocks)
    if not 0 <= layer < L:
        raise ValueError(f"layer must be in 0..{L - 1}, got {layer}")
    ids, mask = real.encode([sentence])
    tr = real.model(ids, mask, trace=True).trace
    attn = real.model.blocks[layer].attn
    pattern = tr[f"blocks.{layer}.attn.pattern"]
    norm = layer_norm_map(contributions(pattern, transformed_values(tr[f"blocks.{layer}.attn.v"],
                                                                    attn.o_proj.weight, attn.n_heads)))[0]
    return real.tokens(sentence), pattern[0].mean(dim=0), norm / norm.sum(dim=-1, keepdim=True)



def norms_paragraph(result: dict, lang: str | None = None) -> str:
    """What the stored run says, in words chosen by its verdicts: the special tokens' weight and norm shares where
    the premise holds, the α-‖f‖ correlation, and the mixing ratio against its weight-based reading. In ``lang``
    (``None``: the running notebook's edition); the verdict words are the shared ones (``verdict_words``)."""
    rows = {v.test.name: v for v in verdicts(result)}
    m = layer_means(result)
    L = len(m["weight_share"])
    judged = [l for l in range(L) if rows[f"special_norm_below_weight_{l}"].verdict != "out of regime"]
    below = [l for l in judged if rows[f"special_norm_below_weight_{l}"].verdict == "reproduced"]
    w = sum(m["weight_share"][l] for l in judged) / max(1, len(judged))
    n = sum(m["norm_share"][l] for l in judged) / max(1, len(judged))
    rho, mix, depth = rows["alpha_norm_negative"], rows["mixing_below_weights"], rows["mixing_early_above_late"]
    r = sum(m["mixing"]) / L
    wm = sum(m["weight_mixing"]) / L
    if resolve_language(lang) == "ko":
        return _norms_paragraph_ko(m, L, judged, below, w, n, rho, mix, depth, r, wm)
    attention = ("" if "attention_mixing" not in m else      # absent from a result made before it was read
                 f"; attention alone, by the norms of what it moves but before the residual and the LayerNorm, "
                 f"says {percent(sum(m['attention_mixing']) / L)}")
    return (f"[CLS], [SEP] and punctuation are {percent(m['position_share'][0])} of the tokens. Where they draw more "
            f"weight than that ({len(judged)} of {L} layers), they take **{percent(w)}** of the weight but "
            f"**{percent(n)}** of the norm; the norm share lies below the weight share at {len(below)} of "
            f"{len(judged)} ({'reproduced' if len(below) == len(judged) and judged else 'not everywhere'}). "
            f"Across a sentence's tokens, the weight a token receives and the length of its vector correlate "
            f"with ρ = {rho.mean:+.2f} ({rho.verdict_words}). Counting V, O, the residual and the LayerNorm, a token "
            f"takes **{percent(r)}** of its new state from the context, where the weights alone say {percent(wm)} "
            f"({mix.verdict_words}; BERT-base: 18.8 % against 97.1 %, arXiv 2109.07152){attention}; "
            f"the first two layers mix {'more' if depth.mean > 0 else 'less'} than the last two by "
            f"{abs(depth.mean) * 100:.1f} points ({depth.verdict_words}).")


def _norms_paragraph_ko(m, L, judged, below, w, n, rho, mix, depth, r, wm) -> str:
    """:func:`norms_paragraph` in Korean: the same numbers and the same verdict-chosen words."""
    attention = ("" if "attention_mixing" not in m else
                 f"; 잔차와 LayerNorm 전에 옮기는 것의 노름으로 본 어텐션만으로는 "
                 f"{percent(sum(m['attention_mixing']) / L)}입니다")
    everywhere = "재현됨" if len(below) == len(judged) and judged else "모든 층은 아님"
    return (f"[CLS], [SEP]와 구두점은 토큰의 {percent(m['position_share'][0])}입니다. 이들이 그보다 많은 가중치를 "
            f"받는 곳({L}개 층 가운데 {len(judged)}개)에서 이들의 몫은 가중치로 **{percent(w)}**, 노름으로 "
            f"**{percent(n)}**입니다. 노름 몫이 가중치 몫보다 낮은 층은 {len(judged)}개 "
            f"가운데 {len(below)}개입니다({everywhere}). 한 문장의 토큰들에서, 토큰이 받는 가중치와 그 벡터의 길이는 "
            f"{attach(f'ρ = {rho.mean:+.2f}', '으로/로')} 상관됩니다({verdict_label(rho, lang='ko')}). V, O, 잔차와 LayerNorm까지 "
            f"세면 토큰의 새 상태 가운데 문맥에서 오는 몫은 **{percent(r)}**입니다. 가중치만으로는 "
            f"{percent(wm)}입니다({verdict_label(mix, lang='ko')}; BERT-base: 18.8 % 대 97.1 %, arXiv 2109.07152){attention}. "
            f"처음 두 층은 마지막 두 층보다 {abs(depth.mean) * 100:.1f} 포인트 "
            f"{'더 많이' if depth.mean > 0 else '더 적게'} 섞습니다({verdict_label(depth, lang='ko')}).")


def encoder_norms(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                  options: RunOptions = RunOptions()) -> dict:
    if tokenizer is not None:
        raise ValueError(f"--tokenizer does not apply to {NAME}: MiniLM reads its own WordPiece tokens, got "
                         f"--tokenizer {tokenizer}")
    cfg = QUICK if quick else SETTINGS
    t0 = time.perf_counter()
    real = load_real_model()
    sentences = corpus_sentences(cfg["n_sentences"], min_tokens=cfg["min_tokens"], max_tokens=cfg["max_tokens"],
                                 real=real, text=None if corpus is None else corpus.text)
    load_s = time.perf_counter() - t0
    payload = {"model": MODEL_NAME, "settings": cfg, "sentences": sentences,
               "per_layer": measure(real, sentences, cfg["batch_size"])}
    payload["stage_seconds"] = {"load": round(load_s, 1), "measure": round(time.perf_counter() - t0 - load_s, 1)}
    payload["facts"] = facts(payload)
    payload["verdicts"] = verdict_records(verdicts(payload))
    return payload


RECIPE = Recipe(NAME, encoder_norms,
                "all-MiniLM-L6-v2 (chapter 07's encoder): the weight and the norm share of [CLS], [SEP] and "
                "punctuation per layer, the correlation of α with ‖f(x)‖, and the context-mixing ratio with the "
                "residual and the LayerNorm against 1 − α_ii (Kobayashi et al. 2020/2021), on 200 sentences",
                default_seeds=(0,), budget_s=20 * 60, text=True, verdicts=verdicts)
