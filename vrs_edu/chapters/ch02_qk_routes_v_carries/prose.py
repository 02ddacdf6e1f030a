"""Chapter 02's computed sentences and tables, in each edition: every function takes the numbers it states and
``lang`` (None: the running notebook's edition) and returns Markdown for :func:`vrs_edu.viz.prose.say` (or a plain
line for ``print``). The English words are the chapter's as they were in its code cells."""
from __future__ import annotations

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.viz.prose import table


def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


#: The conditions of the chapter's interventions (keys of a swap or frozen-routing result), in Korean: the figures'
#: legends and the tables' headers.
CONDITIONS_KO = {"pattern swap": "패턴 교환", "value swap": "값 교환", "uniform": "균등", "previous layer": "이전 층",
                 "batch mean": "배치 평균"}


def condition_label(name: str, lang: str | None = None) -> str:
    """An intervention's name (``"pattern swap"``, ``"uniform"``, …) as the edition writes it."""
    return CONDITIONS_KO.get(name, name) if _ko(lang) else name


def head_label(layer: int, head: int, lang: str | None = None) -> str:
    """``layer 0, head 1`` (a figure's title)."""
    return f"층 {layer}, 헤드 {head}" if _ko(lang) else f"layer {layer}, head {head}"


def swap_title(lang: str | None = None) -> str:
    """The swap figure's title."""
    if _ko(lang):
        return "한 층의 한쪽 절반을 다른 입력의 것으로 교환"
    return "swap one half of one layer with another input's"


def frozen_title(lang: str | None = None) -> str:
    """The frozen-routing figure's title."""
    return "한 층의 경로를 고정" if _ko(lang) else "freeze one layer's routing"


def model_line(n_layers: int, n_heads: int, val_loss: float, lang: str | None = None) -> str:
    """The checkpoint's shape and validation loss."""
    if _ko(lang):
        return f"{n_layers}층 × 헤드 {n_heads}개; 검증 손실 {val_loss:.3f} nats"
    return f"{n_layers} layers × {n_heads} heads; validation loss {val_loss:.3f} nats"


def swap_sentence(ratio: list[float], clean: float, lang: str | None = None) -> str:
    """At how many layers the value swap costs more than the pattern swap (``ratio``: value / pattern per layer)."""
    more = sum(r > 1 for r in ratio)
    if _ko(lang):
        return (f"값 교환은 {len(ratio)}개 층 중 {more}개에서 패턴 교환보다 비용이 크며, 그 비용은 패턴 교환의 "
                f"{min(ratio):.2f}~{max(ratio):.2f}배입니다(원래 손실 {clean:.3f} nats).")
    return (f"The value swap costs more than the pattern swap at {more} of {len(ratio)} "
            f"layers, {min(ratio):.2f} to {max(ratio):.2f} times as much (clean loss {clean:.3f} "
            "nats).")


def difference_line(what: str, diff: float, lang: str | None = None) -> str:
    """The learner's layer-3 result against the model's: ``what`` is ``"pattern"`` or ``"z"``."""
    if _ko(lang):
        mine = "패턴" if what == "pattern" else what
        return f"층 3, 여러분의 {mine}과 모델의 {mine}의 최대 차이: {diff:.1e}" if what == "pattern" else \
            f"층 3, 여러분의 {mine}와 모델의 {mine}의 최대 차이: {diff:.1e}"
    return f"layer 3, your {what} vs the model's: largest difference {diff:.1e}"


def value_swap_line(clean: float, swapped: float, lang: str | None = None) -> str:
    """The learner's value swap at the last layer on the first batch."""
    if _ko(lang):
        return f"마지막 층, 첫 배치: 원래 손실 {clean:.3f}, 값을 교환하면 {swapped:.3f} nats"
    return f"last layer, first batch: clean loss {clean:.3f}, with the values swapped {swapped:.3f} nats"


def norm_view_sentence(layer: int, head: int, top: dict, n_chars: int, drawn: int, shown: int,
                       lang: str | None = None) -> str:
    """Where the head whose weight and norm maps differ most changes most: a character whose vectors are short."""
    if _ko(lang):
        name = "공백" if top["token"] == " " else f"'{top['token']}'"
        weight = attach(f"{top['weight']:.2f}", "을/를")
        return (f"두 지도가 가장 다른 헤드는 층 {layer}, 헤드 {head}입니다. 가장 크게 바뀌는 곳은 {n_chars}자 문장 전체의 "
                f"{name} {top['count']}개입니다(그려진 {shown}자 안에는 {drawn}개). 이 문자들은 자신을 볼 수 있는 "
                f"쿼리들의 가중치 중 {weight} 받지만 노름 지도에서는 {top['norm']:.2f}만 받습니다. 그 "
                f"벡터가 짧기 때문입니다: ‖f(x)‖ {top['f_norm']:.2f}, 다른 문자들은 {top['f_norm_others']:.2f}.")
    name = "spaces" if top["token"] == " " else f"occurrences of '{top['token']}'"
    return (f"Layer {layer}, head {head} is the head whose two maps differ most. Its largest change is at the "
            f"{top['count']} {name} of the whole {n_chars}-character sentence ({drawn} of them in the "
            f"{shown} drawn): they take {top['weight']:.2f} of the weight of the queries that can "
            f"see them but {top['norm']:.2f} of the norm map, because their vectors are short: "
            f"‖f(x)‖ {top['f_norm']:.2f} against {top['f_norm_others']:.2f} for the other characters.")


def map_distance_sentence(n_heads: int, low: float, high: float, mean: float, lang: str | None = None) -> str:
    """How far apart the weight and the norm maps are across the heads."""
    if _ko(lang):
        return (f"헤드 {n_heads}개에 걸쳐 두 지도의 차이는 {low:.2f}~{high:.2f}, 평균 {mean:.2f}입니다(0: 같은 지도, "
                "1: 공통된 소스가 없음).")
    return (f"Across the {n_heads} heads the two maps differ by {low:.2f} to {high:.2f}, "
            f"{mean:.2f} on average (0: the same map, 1: no source in common).")


def contributions_line(layer: int, head: int, writes: bool, shares: bool, lang: str | None = None) -> str:
    """Whether the learner's vectors sum to the head's write and their norms give the figure's map."""
    if _ko(lang):
        yes = {True: "예", False: "아니요"}
        return (f"층 {layer}, 헤드 {head}: 소스에 대해 합하면 여러분의 벡터가 헤드가 쓰는 것과 같은가(1e-5 이내): "
                f"{yes[bool(writes)]}; 쿼리마다 정규화한 여러분의 노름 지도가 그림의 것과 같은가: {yes[bool(shares)]}")
    return (f"layer {layer}, head {head}: summed over the sources, your vectors are what the head writes "
            f"(within 1e-5): {writes}; your norm map, normalised per query, is the figure's: {shares}")


def frozen_sentence(uniform0: float, deep: range, deep_share: dict, costliest: int, n_after_first: int,
                    lang: str | None = None) -> str:
    """What freezing one layer's routing costs: layer 0 against the deep layers, and the costliest substitute."""
    if _ko(lang):
        return (f"균등한 어텐션 경로는 층 0에 {uniform0:+.3f} nats의 비용을 치르게 하지만, 깊은 층 {deep.start}–{deep.stop - 1}"
                f"에는 평균적으로 원래 손실의 {100 * deep_share['uniform']:.1f} %입니다. 위치를 유지하는 배치 평균 패턴은 "
                f"깊은 층에 {100 * deep_share['batch mean']:.1f} %의 비용을 치르게 합니다. 이전 층의 패턴은 "
                f"{n_after_first}개 층 중 {costliest}개에서 가장 비싼 대체물입니다.")
    return (f"Uniform routing costs layer 0 {uniform0:+.3f} nats but the deep layers "
            f"{deep.start}–{deep.stop - 1} {100 * deep_share['uniform']:.1f} % of the clean loss on "
            "average; the batch-mean pattern, which keeps position, costs them "
            f"{100 * deep_share['batch mean']:.1f} %. The previous layer's pattern is the costliest "
            f"substitute at {costliest} of {n_after_first} layers.")


def blend_table(default: dict, temps, sweep: dict, lang: str | None = None) -> tuple[str, str]:
    """The widget's default, and the last layer's loss by V₁ weight (rows) and temperature (columns)."""
    rows = [[f"{w:.1f}"] + [f"{v:.3f}" for v in sweep[w]] for w in sweep]
    if _ko(lang):
        return (f"기본값: 문장에서 손실 {default['loss']:.3f} nats, 패턴 엔트로피 {default['entropy']:.3f} nats. "
                "마지막 층, 검증 배치 하나에서 V₁ 가중치(행)와 온도(열)에 따른 손실(nats):",
                table(["V₁ 가중치"] + [f"T = {t}" for t in temps], rows))
    return (f"Default: loss {default['loss']:.3f} nats on the sentence, pattern entropy "
            f"{default['entropy']:.3f} nats. Last layer, one validation batch, loss in nats by V₁ weight "
            "(rows) and temperature (columns):",
            table(["V₁ weight"] + [f"T = {t}" for t in temps], rows))


def answer(uniform0: float, clean: float, deep_uniform: float, ratio: list[float], lang: str | None = None) -> str:
    """The chapter's answer: a deep layer depends on its QK pattern less than the first; values matter more."""
    more = sum(r > 1 for r in ratio)
    if _ko(lang):
        return ("이 모델의 깊은 층은 새로 계산한 QK 패턴에 실제로 의존하지만, 첫 층보다는 덜 의존합니다: 패턴을 균등한 "
                f"패턴으로 바꾸면 깊은 층에서는 평균적으로 원래 손실의 {100 * deep_uniform:.1f} %의 비용이 들고, 층 "
                f"0에서는 {uniform0:.2f} nats({100 * uniform0 / clean:.0f} %)가 듭니다. 층이 무엇을 옮기는지가 "
                f"어디를 보는지보다 중요합니다: 값을 다른 텍스트의 값과 바꾸면 패턴을 바꿀 때의 {min(ratio):.2f}~"
                f"{max(ratio):.2f}배 비용이 들며, {len(ratio)}개 층 중 {more}개에서 그렇습니다. 03장은 뒤쪽 층에 첫 "
                "층의 값을 주고, 07장은 이 실험들을 사전 학습된 모델에서 반복합니다.")
    return ("A deep layer of this model does depend on its freshly computed QK pattern, but less than the "
            "first layer: replacing its pattern by a uniform one costs the deep layers "
            f"{100 * deep_uniform:.1f} % of the clean loss on average, against {uniform0:.2f} "
            f"nats ({100 * uniform0 / clean:.0f} %) at layer 0. What the layer moves matters "
            f"more than where it looks: swapping its values with another text's costs {min(ratio):.2f} to "
            f"{max(ratio):.2f} times as much as swapping its pattern, at {more} of "
            f"{len(ratio)} layers. Chapter 03 gives later layers the first layer's values; chapter 07 repeats "
            "these experiments on a pretrained model.")


def effect_tables(swap_rows: list, frozen_rows: list, gap: list[float], clean: float, val_loss: float,
                  lang: str | None = None) -> tuple[str, str, str]:
    """The swaps' and the frozen routings' costs per layer (rows of
    :func:`~vrs_edu.chapters.ch02_qk_routes_v_carries.readout.effect_rows`), and how wide the gap between the swaps
    is in standard errors (``gap`` per layer)."""
    at = gap.index(min(gap))
    if _ko(lang):
        c = CONDITIONS_KO
        return (table(["층", f"{c['pattern swap']} (nats)", f"{c['value swap']} (nats)"], swap_rows),
                table(["층", f"{c['uniform']} (nats)", c["previous layer"], c["batch mean"]], frozen_rows),
                f"두 교환 사이의 차이는 적어도 표준 오차의 {min(gap):.1f}배입니다(층 {at}; 오차는 독립인 것처럼 "
                f"합쳤습니다). 배치 4개는 평균적인 텍스트보다 어렵습니다: 그 원래 손실({clean:.3f} nats)은 분할 "
                f"전체에서 잰 체크포인트의 검증 손실({val_loss:.3f})보다 높습니다.")
    return (table(["layer", "pattern swap (nats)", "value swap (nats)"], swap_rows),
            table(["layer", "uniform (nats)", "previous layer", "batch mean"], frozen_rows),
            f"The gap between the two swaps is at least {min(gap):.1f} standard errors wide (layer "
            f"{at}; the errors combined as if independent). The 4 batches are harder "
            f"than the average text: their clean loss ({clean:.3f} nats) is above the "
            f"checkpoint's validation loss over the whole split ({val_loss:.3f}).")


def heads_table(n: int, best: tuple[int, int], best_prev: float, prev, entropy, lang: str | None = None
                ) -> tuple[str, str]:
    """The patterns drawn, the strongest previous-token head, and every head's previous-token weight and entropy."""
    L, H = prev.shape
    rows = [[l] + [f"{prev[l, h]:.3f} / {entropy[l, h]:.3f}" for h in range(H)] for l in range(L)]
    if _ko(lang):
        return (f"위의 패턴은 첫 층과 마지막 층의 모든 헤드가 문장의 처음 {n}자에 대해 만든 것입니다(행: 읽는 위치, "
                f"열: 읽히는 위치). 가장 강한 이전 토큰 헤드는 층 {best[0]}, 헤드 {best[1]}이며, 가중치의 "
                f"{attach(f'{best_prev:.3f}', '을/를')} 이전 문자에 둡니다:",
                table(["층"] + [f"헤드 {h}: 이전 / 엔트로피" for h in range(H)], rows))
    return (f"The patterns above are every head's on the first {n} characters of the sentence, in the "
            "first and the last layer (row: the position that reads, column: the position read). The "
            f"strongest previous-token head is layer {best[0]}, head {best[1]}, with "
            f"{best_prev:.3f} of its weight on the previous character:",
            table(["layer"] + [f"head {h}: prev / entropy" for h in range(H)], rows))


def copying_sentence(chance: float, largest: float, layer: int, layer0: str, lang: str | None = None) -> str:
    """The heads' copying scores against chance."""
    if _ko(lang):
        return (f"복사 점수는 우연 수준({chance:.3f}) 근처에 머뭅니다: 가장 큰 값은 {largest:.3f}(층 {layer})이고, "
                f"층 0의 점수는 {layer0}입니다.")
    return (f"Copying scores stay near chance ({chance:.3f}): the largest is {largest:.3f} (layer "
            f"{layer}), layer 0's are {layer0}.")
