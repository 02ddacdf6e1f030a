"""Chapter 07's computed prose: the lines, table headers and paragraphs its code cells print about the real encoder
(all-MiniLM-L6-v2), each in ``lang`` (default: the running notebook's edition, :func:`resolve_language`).

The English texts are the chapter's own, word for word (its stored outputs must not change); the Korean ones are
written for Korean word order and particles, their words chosen from the numbers exactly as the English are.
"""
from __future__ import annotations

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language


def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def model_line(name: str, cfg, n_params: int, licence: str, lang: str | None = None) -> str:
    """The model in two lines: layers, width, heads, MLP, vocabulary, parameters and licence."""
    if _ko(lang):
        return (f"{name}: 층 {cfg.n_layers}개, d_model {cfg.d_model}, 헤드 {cfg.n_heads}개, MLP {cfg.d_mlp},\n"
                f"    어휘 {cfg.vocab_size:,}개, 파라미터 {n_params / 1e6:.1f} M개; 라이선스 {licence}")
    return (f"{name}: {cfg.n_layers} layers, d_model {cfg.d_model}, {cfg.n_heads} heads, MLP {cfg.d_mlp},\n"
            f"    vocabulary {cfg.vocab_size:,}, {n_params / 1e6:.1f} M parameters; licence {licence}")


def parity_lines(n_sentences: int, n_tokens: int, n_depths: int, agrees: bool, lang: str | None = None) -> str:
    """What the parity check compared, and whether every hidden state agrees with transformers within 1e-4."""
    if _ko(lang):
        return (f"문장 {n_sentences}개, 실제 토큰 {n_tokens}개, 깊이 {n_depths}개를 비교함\n"
                f"모든 은닉 상태가 transformers.BertModel과 1e-4 안에서 일치: {'예' if agrees else '아니요'}")
    return (f"{n_sentences} sentences, {n_tokens} real tokens, {n_depths} depths compared\n"
            f"every hidden state agrees with transformers.BertModel within 1e-4: {agrees}")


def parity_detail(version: str, parity: list[float], lang: str | None = None) -> str:
    """The transformers version and the largest difference per depth ("How sure are we?")."""
    diffs = ", ".join(f"{d:.1e}" for d in parity)
    if _ko(lang):
        return f"transformers {version}; 깊이별 최대 |MiniBert − BertModel|: {diffs}"
    return f"transformers {version}; max |MiniBert − BertModel| per depth: {diffs}"


def probe_title(name: str, lang: str | None = None) -> str:
    """The title of the probe figure."""
    return f"{name}: 토큰 정체성이 설명하는 것" if _ko(lang) else f"{name}: what token identity explains"


def identity_sentence(probes: dict, lang: str | None = None) -> str:
    """How much of layer 0's values, queries and keys token identity explains, and at how many layers v is the best
    explained of the three (held-out R²)."""
    L = len(probes["v"])
    v_first = sum(probes["v"][l] > max(probes["q"][l], probes["k"][l]) for l in range(L))
    if _ko(lang):
        v0 = f"{probes['v'][0]:.3f}"
        return (f"층 0에서 토큰 정체성만으로 값 분산의 {attach(v0, '을/를')} 설명하며, 쿼리는 "
                f"{probes['q'][0]:.3f}, 키는 {probes['k'][0]:.3f}입니다. {L}개 층 가운데 {v_first}개 층에서 "
                f"v가 셋 중 가장 잘 설명됩니다(홀드아웃 R², 테스트 토큰 {probes['n_test']}개).")
    return (f"Token identity alone explains {probes['v'][0]:.3f} of the values' variance at layer 0 "
            f"against {probes['q'][0]:.3f} of the queries' and {probes['k'][0]:.3f} of the keys'; v is "
            f"the best explained of the three at {v_first} of {L} layers (held-out R², "
            f"{probes['n_test']} test tokens).")


def x0_probe_table(probes_x0: dict, probes: dict, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): each layer's held-out R² of q, k, v from x0 and the gain over token identity."""
    L = len(probes_x0["v"])
    columns = (["층", "x0에서 q", "x0에서 k", "x0에서 v", "정체성 대비 이득: q, k, v"] if _ko(lang) else
               ["layer", "q from x0", "k from x0", "v from x0", "gain over identity: q, k, v"])
    return columns, [[l, *(f"{probes_x0[s][l]:.3f}" for s in "qkv"),
                      ", ".join(f"{probes_x0[s][l] - probes[s][l]:+.3f}" for s in "qkv")] for l in range(L)]


def swap_table(pattern_swap: dict, value_swap: dict, frozen_uniform: dict, frozen_previous: dict,
               lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): the sentence embedding's cosine to the clean one under each intervention, per layer."""
    L = len(pattern_swap["cos"])
    columns = (["층", "패턴 교환", "값 교환", "균등 경로", "이전 층의 경로"] if _ko(lang) else
               ["layer", "pattern swap", "value swap", "uniform routing", "previous layer's"])
    return columns, [[l, f"{pattern_swap['cos'][l]:.3f}", f"{value_swap['cos'][l]:.3f}",
                      f"{frozen_uniform['cos'][l]:.3f}", "—" if l == 0 else f"{frozen_previous['cos'][l]:.3f}"]
                     for l in range(L)]


def swap_sentence(worse_v: int, milder: int, L: int, pattern_swap: dict, frozen_uniform: dict,
                  lang: str | None = None) -> str:
    """At how many layers swapping the values changes the embedding more than swapping the pattern, and more than
    a uniform pattern."""
    if _ko(lang):
        return (f"값을 교환하면 {L}개 층 가운데 {worse_v}개 층에서 패턴을 교환할 때보다 문장 임베딩이 더 많이 바뀌고, "
                f"{L}개 층 가운데 {milder}개 층에서 균등한 패턴보다 더 많이 바뀝니다(서로 다른 두 문장 사이의 코사인은 "
                f"{pattern_swap['reference']:.3f}입니다. 같은 길이의 쌍으로 묶은 문장 {pattern_swap['n']}개, "
                f"고정된 어텐션 경로에는 {frozen_uniform['n']}개).")
    return ("Swapping the values changes the sentence embedding more than swapping the pattern at "
            f"{worse_v} of {L} layers, and more than a uniform pattern at {milder} of {L} (the cosine "
            f"between two different sentences is {pattern_swap['reference']:.3f}; {pattern_swap['n']} "
            f"sentences in pairs of equal length, {frozen_uniform['n']} for the frozen routing).")


def special_tokens_sentence(weight_part: float, norm_part: float, lang: str | None = None) -> str:
    """The demo sentence's [CLS], full stop and [SEP]: their share of the weight against their share of the norm."""
    if _ko(lang):
        return (f"이 문장에서 [CLS], 마침표, [SEP]는 각 토큰의 어텐션 가중치 가운데 평균 {attach(f'**{weight_part:.2f}**', '을/를')} "
                f"받지만, 층이 실제로 옮기는 것 가운데서는 **{norm_part:.2f}**만 차지합니다.")
    return (f"In this sentence [CLS], the full stop and [SEP] take **{weight_part:.2f}** of each token's "
            f"attention weight on average, but **{norm_part:.2f}** of what the layer actually moves.")


# The norms table's columns: header -> key of vrs_edu.lab.analysis.layer_means.
NORMS_COLUMNS = {"special tokens' weight share": "weight_share", "their norm share": "norm_share",
                 "their share of the tokens": "position_share", "1 − α_ii (weights)": "weight_mixing",
                 "attention alone (norms)": "attention_mixing", "mixing ratio (with residual, LN)": "mixing"}
NORMS_COLUMNS_KO = ["특수 토큰의 가중치 몫", "그 노름 몫", "토큰 중 그 비율", "1 − α_ii (가중치)", "어텐션만 (노름)",
                    "혼합 비율 (잔차, LN 포함)"]


def norms_table(nm: dict, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the stored encoder-norms run's layer means (``nm``: :func:`layer_means`)."""
    L = len(nm["weight_share"])
    names = NORMS_COLUMNS_KO if _ko(lang) else list(NORMS_COLUMNS)
    return ["층" if _ko(lang) else "layer", *names], [[l, *(f"{nm[k][l]:.2f}" for k in NORMS_COLUMNS.values())]
                                                      for l in range(L)]


def ablation_table(ablation: dict, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): the sentence embedding's cosine to the clean one with each projection's input := x0."""
    L = len(ablation["v"])
    return (["층" if _ko(lang) else "layer", "Q := x0", "K := x0", "V := x0"],
            [[l, *(f"{ablation[s][l]:.3f}" for s in "qkv")] for l in range(L)])


def ablation_sentence(deep: range, deep_abl: dict[str, float], lang: str | None = None) -> str:
    """The deep layers' mean cosine per path, and which path tolerates x0 most and least there."""
    most, least = max(deep_abl, key=deep_abl.get).upper(), min(deep_abl, key=deep_abl.get).upper()
    if _ko(lang):
        return (f"층 {deep.start}–{deep.stop - 1}에서 문장 임베딩은 깨끗한 임베딩과의 평균 코사인을 "
                + attach(", ".join(f"{s.upper()} {deep_abl[s]:.3f}" for s in "qkv"), "으로/로")
                + f" 유지합니다. 그곳에서 가장 잘 견디는 경로는 {most}, 가장 못 견디는 경로는 {least}입니다.")
    return (f"In layers {deep.start}–{deep.stop - 1} the sentence embedding keeps a mean cosine of "
            + ", ".join(f"{s.upper()} {deep_abl[s]:.3f}" for s in "qkv")
            + f" to the clean one: the most tolerant path there is {most}, the least {least}.")


def your_cosine_line(layer: int, mine: float, table_value: float, lang: str | None = None) -> str:
    """The learner's substitution cosine beside the chapter's table."""
    if _ko(lang):
        return f"층 {layer}, V := x0: 내 코사인 {mine:.3f}, 표의 값 {table_value:.3f}"
    return f"layer {layer}, V := x0: your cosine {mine:.3f}, the table's {table_value:.3f}"


def toy_swap_table(pattern_swap: dict, value_swap: dict, toy_swaps: dict, n_layers: int,
                   lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): the real encoder's swap cosines beside the toy's swap losses, per layer."""
    columns = (["층", "실제: 패턴 교환 (cos)", "실제: 값 교환 (cos)", "장난감: 패턴 교환 (Δ nats)",
                "장난감: 값 교환 (Δ nats)"] if _ko(lang) else
               ["layer", "real: pattern swap (cos)", "real: value swap (cos)", "toy: pattern swap (Δ nats)",
                "toy: value swap (Δ nats)"])
    return columns, [[l, f"{pattern_swap['cos'][l]:.3f}", f"{value_swap['cos'][l]:.3f}",
                      f"{toy_swaps['pattern swap'][l].mean:+.3f}", f"{toy_swaps['value swap'][l].mean:+.3f}"]
                     for l in range(n_layers)]


def toy_swap_sentence(worse_v: int, L: int, command: str, toy_worse_v: int, toy_L: int, n_batches: int,
                      n_sequences: int, lang: str | None = None) -> str:
    """At how many layers the value swap changes more than the pattern swap, in the real model and in the toy."""
    if _ko(lang):
        return (f"값 교환이 패턴 교환보다 더 많이 바꾸는 층은 실제 모델에서 {L}개 가운데 {worse_v}개, 장난감 모델"
                f"(`{command}`)에서 {toy_L}개 가운데 {toy_worse_v}개입니다. 장난감의 교환은 02장과 같은 검증 배치 "
                f"{n_batches}개(시퀀스 {n_sequences}개)를 쓰므로, 그 열은 02장의 표와 맞습니다.")
    return (f"The value swap changes more than the pattern swap in the real model at {worse_v} of {L} "
            f"layers, in the toy (`{command}`) at {toy_worse_v} of {toy_L}. The "
            f"toy's swaps use the same {n_batches} validation batches "
            f"({n_sequences} sequences) as chapter 02, so its columns match "
            "chapter 02's table.")


def deep_reading_sentence(deep: range, probes: dict, deep_abl: dict[str, float], lang: str | None = None) -> str:
    """The real model's deep layers: mean probe R² from identity and mean ablation cosine per path."""
    r2 = ", ".join(f"{s} {sum(probes[s][l] for l in deep) / len(deep):.3f}" for s in "qkv")
    cos = ", ".join(f"{s} {deep_abl[s]:.3f}" for s in "qkv")
    if _ko(lang):
        return f"실제 모델, 층 {deep.start}–{deep.stop - 1}: 정체성에서 얻은 탐침 R² {r2}; 절제 코사인 {cos}."
    return f"Real model, layers {deep.start}–{deep.stop - 1}: probe R² from identity {r2}; ablation cosine {cos}."


def toy_x0_table(rows: list[dict], lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the toys' x0 shares (:func:`~vrs_edu.chapters.ch07_real_model.probes.toy_x0_coefficients`)."""
    columns = (["장난감 결과", "변형", "시드", "q의 x0 비중", "k의 x0 비중", "v의 x0 비중"] if _ko(lang) else
               ["toy result", "variant", "seeds", "x0 share q", "x0 share k", "x0 share v"])
    return columns, [[f"`{r['command']}`", r["variant"], r["seeds"], *(f"{r['x0_share'][s]:.3f}" for s in "qkv")]
                     for r in rows]


def toy_ablation_table(rows: list[dict], lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the toys' deep substitution ablations (:func:`~vrs_edu.chapters.ch07_real_model.probes.toy_ablations`)."""
    columns = (["장난감 결과", "변형", "시드", "Δ 손실, Q := x0", "K := x0", "V := x0"] if _ko(lang) else
               ["toy result", "variant", "seeds", "Δ loss, Q := x0", "K := x0", "V := x0"])
    return columns, [[f"`{r['command']}`", r["variant"], r["seeds"], *(f"{r['deep'][s]:+.3f}" for s in "qkv")]
                     for r in rows]


def real_model_name(lang: str | None = None) -> str:
    """The real model's row name in the concentration table."""
    return "실제 모델 (post-LN 인코더)" if _ko(lang) else "real model (post-LN encoder)"


def toy_name(recipe: str, variant: str, lang: str | None = None) -> str:
    """A toy's row name in the concentration table."""
    return f"장난감 {recipe}: {variant}" if _ko(lang) else f"toy {recipe}: {variant}"


def concentration_columns(lang: str | None = None) -> list[str]:
    """The concentration table's columns."""
    if _ko(lang):
        return ["모델", "엔트로피 (nats): 처음 → 마지막", "과평활화 (코사인): x0 → 최대 → 마지막"]
    return ["model", "entropy (nats): first → last", "over-smoothing (cosine): x0 → max → last"]


def answer(probes: dict, worse_v: int, deep: range, deep_abl: dict[str, float], nm: dict,
           lang: str | None = None) -> str:
    """The chapter's closing paragraph: what holds of the course's picture in the real encoder, what does not, and
    what the weights alone mis-state (``nm``: the norms run's layer means)."""
    L = len(probes["v"])
    leads = sum(probes["v"][l] > max(probes["q"][l], probes["k"][l]) for l in range(L))
    qk0 = max(probes["q"][0], probes["k"][0])
    ws, ns = sum(nm["weight_share"]) / L, sum(nm["norm_share"]) / L
    mix, wmix = sum(nm["mixing"]) / L, sum(nm["weight_mixing"]) / L
    if _ko(lang):
        return (f"강좌의 그림 가운데 절반은 여기서 아무도 학습하지 않은 가중치에서도 성립합니다. V는 토큰 정체성을 "
                f"나릅니다(토큰 정체성은 층 0의 값 가운데 {probes['v'][0]:.2f}, 쿼리나 키 가운데 {attach(f'{qk0:.2f}', '을/를')} "
                f"설명하며, {L}개 층 가운데 {leads}개 층에서 v가 앞섭니다). 또 {L}개 층 가운데 {worse_v}개 층에서 "
                f"층의 값을 교환하면 패턴을 교환할 때보다 출력이 더 많이 바뀝니다. 깊은 층에 대한 주장, 곧 깊은 V는 "
                f"x0을 다시 읽지만 깊은 Q와 K는 그렇지 않다는 주장은 탐침에서 경향으로만 보이고 대체 절제에서는 전혀 "
                f"보이지 않습니다(층 {deep.start}–{deep.stop - 1}에서 V가 *가장 못* 견디는 경로이며, 코사인 "
                f"{deep_abl['v']:.3f}). 학습 목표, 구조와 규모가 그것이 모순이 아닌 이유와 디코더에서 찾아야 하는 "
                f"이유를 말해 줍니다. 08장은 같은 질문을 실제 30층 디코더 SmolLM2-135M에 던집니다. 그리고 가중치만으로는 "
                f"어텐션이 옮기는 것을 잘못 말합니다. 특수 토큰은 가중치의 {ws:.0%}를 받지만 노름으로는 {ns:.0%}이고, "
                f"가중치로는 {wmix:.0%}인 문맥의 몫이 실제로는 {mix:.0%}입니다.")
    return ("Half of the course's picture holds in weights nobody here trained: V carries token identity "
            f"(token identity explains {probes['v'][0]:.2f} of layer 0's values, "
            f"{qk0:.2f} of its queries or keys; v leads at "
            f"{leads} of {L} layers), and swapping a layer's values changes the "
            f"output more than swapping its pattern at {worse_v} of {L} layers. The deep-layer claim, "
            "deep V re-reads x0 while deep Q and K do not, shows only as a tendency in the probes and "
            "not at all in the substitution ablation (V is the *least* tolerant path in layers "
            f"{deep.start}–{deep.stop - 1}, cosine {deep_abl['v']:.3f}). Objective, architecture and "
            "scale say why that is no contradiction, and why a decoder is where to look for it: chapter "
            "08 asks the same questions of a real 30-layer decoder, SmolLM2-135M. And the weights alone "
            "mis-state what attention moves: the special tokens take "
            f"{ws:.0%} of the weight but {ns:.0%} "
            "of the norm, "
            f"and a token mixes in {mix:.0%} of context where the weights say "
            f"{wmix:.0%}.")


def probe_details(n_sentences: int, n_tokens: int, probes: dict, lang: str | None = None) -> str:
    """How many sentences and tokens the probes were fitted and tested on."""
    if _ko(lang):
        return (f"문장 {n_sentences}개, 토큰 {n_tokens}개([CLS]와 [SEP] 제외): {probes['n_train']}개로 탐침을 "
                f"맞추고 {probes['n_test']}개로 시험합니다.")
    return (f"{n_sentences} sentences, {n_tokens} tokens ([CLS] and [SEP] left out): "
            f"{probes['n_train']} fit the probes, {probes['n_test']} test them.")


def probe_details_table(probes: dict, margin: list[float], lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): every layer's held-out R² of q, k, v and the stream, and v's margin over q and k."""
    L = len(probes["v"])
    ko = _ko(lang)
    columns = ["층" if ko else "layer", "q", "k", "v", "스트림" if ko else "stream", "v − max(q, k)"]
    rows = [[l, *(f"{probes[s][l]:.3f}" for s in ("q", "k", "v", "resid")), f"{margin[l]:+.3f}"] for l in range(L)]
    return columns, rows + [["최종" if ko else "final", "", "", "", f"{probes['resid'][L]:.3f}", ""]]


def norms_run_sentence(n_sentences: int, wall_time_s: float, lang: str | None = None) -> str:
    """The stored encoder-norms run's size and time."""
    if _ko(lang):
        return f"문장 {n_sentences}개; 실행에 {wall_time_s:.0f} s가 걸렸습니다."
    return f"{n_sentences} sentences; the run took {wall_time_s:.0f} s."
