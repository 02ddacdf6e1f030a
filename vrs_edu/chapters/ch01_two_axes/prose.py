"""Chapter 01's computed sentences and tables, in each edition: every function takes the numbers it states and
``lang`` (None: the running notebook's edition) and returns Markdown for :func:`vrs_edu.viz.prose.say` (or a plain
line for ``print``). The English words are the chapter's as they were in its code cells."""
from __future__ import annotations

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.viz.prose import table


def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def component_label(label: str, lang: str | None = None) -> str:
    """A stream component's name as a figure or a sentence shows it: ``embed`` is 임베딩 in Korean; ``attn 3`` and
    ``mlp 3`` (the block's sub-layers, named as in the code) stay."""
    return "임베딩" if label == "embed" and _ko(lang) else label


def checkpoint_line(n_params: int, steps: int, val_loss: float, unigram: float, lang: str | None = None) -> str:
    """The line under the checkpoint's provenance: its size, training steps and validation loss."""
    if _ko(lang):
        return (f"파라미터 {n_params:,}개, {steps}스텝; 검증 손실 {val_loss:.3f} nats "
                f"(유니그램 {unigram:.3f} nats)")
    return f"{n_params:,} parameters, {steps} steps; validation loss {val_loss:.3f} nats vs unigram {unigram:.3f} nats"


def effects_sentence(d0: float, t0: float, larger: int, n_before_last: int, lang: str | None = None) -> str:
    """Block 0's total and direct cost, and at how many blocks before the last the total exceeds the direct."""
    if _ko(lang):
        return (f"블록 0을 없애면 총 {t0:+.3f} nats가 들지만 직접 비용은 {d0:+.3f}뿐입니다({t0 / d0:.2f}×). 뒤쪽 "
                f"블록들이 블록 0이 쓴 것을 읽기 때문입니다. 마지막 블록 앞의 블록 {n_before_last}개 중 "
                f"{larger}개에서 총 비용이 직접 비용보다 큽니다.")
    return (f"Removing block 0 costs {t0:+.3f} nats in total but only {d0:+.3f} directly ({t0 / d0:.2f}×): "
            f"later blocks read what it wrote. The total exceeds the direct cost at {larger} of the "
            f"{n_before_last} blocks before the last.")


def two_axes_sentence(norm0: float, norm_l: float, cos0: float, cos_l: float, n_chars: int, in_val: bool,
                      lang: str | None = None) -> str:
    """How the mean norm and the mean cosine to x0 change along depth on the chapter's sentence."""
    if _ko(lang):
        to_norm, to_cos = attach(f"{norm_l:.2f}", "으로/로"), attach(f"{cos_l:.2f}", "으로/로")
        return (f"깊이를 따라 평균 노름은 {norm0:.2f}에서 {to_norm} 커지고, x0과의 평균 코사인은 "
                f"{cos0:.2f}에서 {to_cos} 떨어집니다(이 문장({n_chars}자)이 검증 분할에 있는가: "
                f"{'예' if in_val else '아니요'}).")
    return (f"Along depth the mean norm grows from {norm0:.2f} to {norm_l:.2f} and the "
            f"mean cosine to x0 falls from {cos0:.2f} to {cos_l:.2f} (the "
            f"sentence, {n_chars} characters, is in the validation split: {in_val}).")


def rebuilt_line(diff: float, bound: float, largest: float, lang: str | None = None) -> str:
    """Whether the final state equals the embedding plus the block outputs to within ``bound``."""
    below = diff < bound                                  # the same for both languages
    if _ko(lang):
        side = "미만" if below else "초과"
        return (f"|h_L - (임베딩 + 블록 출력의 합)|의 최댓값: {bound:.0e} {side}  "
                f"(h_L의 성분은 최대 {largest:.1f})")
    side = "below" if below else "above"
    return (f"largest |h_L - (embedding + sum of block outputs)|: {side} {bound:.0e}"
            f"  (entries of h_L are up to {largest:.1f})")


def stack_line(diff: float, lang: str | None = None) -> str:
    """The learner's depth stack against the model's trace."""
    if _ko(lang):
        return f"여러분의 스택과 모델의 추적(trace)의 최대 차이: {diff:.1e}"
    return f"your stack vs the model's trace: largest difference {diff:.1e}"


def attribution_sentence(context: str, token: str, logit: float, prob: float, n: int, total: float,
                         top: list[tuple[float, str]], lang: str | None = None) -> str:
    """The logit of the next character, its probability, the sum of its ``n`` contributions and the largest three
    (``top``: (value, label) pairs)."""
    largest = ", ".join(f"{component_label(lab, lang)} {v:+.3f}" for v, lab in top)
    if _ko(lang):
        return (f"{context!r} 뒤에서 모델은 다음 문자 {token!r}에 로짓 {logit:.3f}(확률 {prob:.3f})을 줍니다. 그 "
                f"기여 {n}개를 더하면 {total:.3f}입니다. 가장 큰 기여: {largest}.")
    return (f"After {context!r} the model gives the next character {token!r} a logit of "
            f"{logit:.3f} (probability {prob:.3f}); its {n} contributions add up to "
            f"{total:.3f}. The largest: " + largest + ".")


def contributions_line(mine: float, logit: float, lang: str | None = None) -> str:
    """The sum of the learner's contributions against the model's logit."""
    if _ko(lang):
        return f"여러분의 기여의 합은 {mine:.3f}, 모델의 로짓은 {logit:.3f}입니다"
    return f"your contributions sum to {mine:.3f}; the model's logit is {logit:.3f}"


def block_effect_line(direct: float, total: float, lang: str | None = None) -> str:
    """The learner's direct and total effect of block 0 on one batch."""
    if _ko(lang):
        return f"검증 배치 하나에서 블록 0의 효과: 직접 {direct:+.3f}, 총 {total:+.3f} nats"
    return f"block 0 on one validation batch: direct {direct:+.3f}, total {total:+.3f} nats"


def depth_table(norms, cosines, lens: dict, unigram: float, lang: str | None = None) -> tuple[str, str]:
    """The depth profile (norm, cosine to x0, logit lens) as a table, and the unigram baseline's line."""
    columns = (["깊이", "노름", "cos(x0)", "렌즈 손실", "렌즈 정확도", "최종 예측과 일치"] if _ko(lang) else
               ["depth", "norm", "cos(x0)", "lens loss", "lens accuracy", "agrees with final"])
    rows = [[l, f"{norms[l]:.3f}", f"{cosines[l]:.3f}", f"{lens['loss'][l]:.3f}", f"{lens['acc'][l]:.3f}",
             f"{lens['agree'][l]:.3f}"] for l in range(len(norms))]
    line = (f"유니그램 기준선(문맥을 전혀 보지 않음): {unigram:.3f} nats." if _ko(lang)
            else f"Unigram baseline (no context at all): {unigram:.3f} nats.")
    return table(columns, rows), line


def last_depth_sentence(lens_loss: float, n_batches: int, n_seq: int, val_loss: float,
                        lang: str | None = None) -> str:
    """The lens at the last depth against the checkpoint's validation loss (over the whole split)."""
    above = lens_loss > val_loss
    if _ko(lang):
        return (f"마지막 깊이에서 렌즈는 모델 자신의 출력을 읽습니다: 이 배치 {n_batches}개(검증 분할 앞부분의 시퀀스 "
                f"{n_seq}개)에서 {lens_loss:.3f} nats로, 검증 분할 전체에서 잰 체크포인트의 검증 손실 "
                f"{val_loss:.3f} nats{'보다 높습니다' if above else '보다 높지 않습니다'}. 차이는 렌즈가 아니라 "
                f"텍스트에서 옵니다(이 배치들은 분할 전체보다 {'어렵습니다' if above else '어렵지 않습니다'}).")
    return (f"At the last depth the lens reads the model's own output: {lens_loss:.3f} nats on "
            f"these {n_batches} batches ({n_seq} sequences from the start of the validation split), "
            f"{'above' if above else 'not above'} the checkpoint's validation loss of "
            f"{val_loss:.3f} nats, which was taken over the whole validation split: the "
            f"difference is the text, not the lens (these batches are {'harder' if above else 'no harder'} "
            "than the split as a whole).")


def live_lens_table(live: list[float], checkpoint: list[float], live_val: float, steps: int,
                    lang: str | None = None) -> tuple[str, str]:
    """The lens loss by depth of the model trained live for ``steps`` beside the checkpoint's, and what its blocks
    remove."""
    ko = _ko(lang)
    columns = (["깊이", f"렌즈 손실, {steps}스텝", "렌즈 손실, 체크포인트"] if ko
               else ["depth", f"lens loss, {steps} steps", "lens loss, checkpoint"])
    rows = [[l, f"{live[l]:.3f}", f"{checkpoint[l]:.3f}"] for l in range(len(live))]
    if ko:
        line = (f"{steps}스텝 뒤 실시간 모델의 검증 손실은 {live_val:.3f} nats입니다. 그 블록들은 깊이 0 이후 렌즈 손실을 "
                f"{live[0] - live[-1]:.3f} nats 줄이고, 체크포인트의 블록들은 {checkpoint[0] - checkpoint[-1]:.3f} "
                "nats 줄입니다.")
    else:
        line = (f"After {steps} steps the live model's validation loss is {live_val:.3f} nats; its blocks "
                f"remove {live[0] - live[-1]:.3f} nats of lens loss after depth 0, "
                f"the checkpoint's {checkpoint[0] - checkpoint[-1]:.3f}.")
    return table(columns, rows), line


def silenced_table(loss: float, token: str, prob: float, silenced: list[dict],
                   lang: str | None = None) -> tuple[str, str]:
    """The trained model's loss and probability of the next character, and a table with one block silenced at a
    time (``silenced``: per block, ``loss`` and ``target_prob``)."""
    rows = [[l, f"{r['loss']:.3f}", f"{r['target_prob']:.3f}"] for l, r in enumerate(silenced)]
    if _ko(lang):
        return (f"학습된 그대로: 문장에서 손실 {loss:.3f} nats, p(다음 = {token!r}) = {prob:.3f}. 블록을 한 번에 "
                "하나씩 끈 결과:",
                table(["끈 블록", "문장에서의 손실 (nats)", "p(다음)"], rows))
    return (f"As trained: loss {loss:.3f} nats on the sentence, p(next = {token!r}) "
            f"= {prob:.3f}. One block silenced at a time:",
            table(["block silenced", "loss on the sentence (nats)", "p(next)"], rows))


def answer(n_blocks: int, diff: float, bound: float, t0: float, d0: float, lens0: float, lens_l: float,
           lang: str | None = None) -> str:
    """The chapter's answer: accumulation connects the layers, the computation builds on it."""
    within = diff < bound
    if _ko(lang):
        return ("잔차 스트림은 층들을 단순한 누적으로 *연결*합니다: 최종 상태는 임베딩과 블록 출력 "
                f"{n_blocks}개의 합과 {bound:.0e} {'이내로' if within else '넘게 차이 나지만'} 같으며, 모든 항의 "
                "가중치는 1입니다. 그러나 *계산*은 서로 독립인 항들의 더미가 아닙니다: 블록 0을 없애면 총 "
                f"{t0:.2f} nats가 들지만 직접 비용은 {d0:.2f} nats입니다. 뒤쪽 블록들이 블록 0이 쓴 것 위에 "
                f"쌓아 올리기 때문입니다. 층별로 읽으면 로짓 렌즈 손실은 {lens0:.2f}에서 {lens_l:.2f} nats로 "
                "떨어집니다. 02장은 다른 축인 어텐션을 열고, 어텐션이 어디를 보는지와 무엇을 옮기는지를 "
                "나눕니다.")
    return ("The residual stream *connects* layers by mere accumulation: the final state equals the "
            f"embedding plus the {n_blocks} block outputs to {'within' if within else 'more than'} "
            f"{bound:.0e}, "
            "with weight 1 for every term. The "
            f"*computation* is not a pile of independent terms: removing block 0 costs {t0:.2f} nats in "
            f"total against {d0:.2f} directly, because later blocks build on what it wrote. Read layer by "
            f"layer, the logit-lens loss falls from {lens0:.2f} to {lens_l:.2f} nats. "
            "Chapter 02 opens the other axis, attention, and separates where it looks from what it "
            "moves.")


def per_batch_table(per_batch: list[dict], ratios: list[float], counts: list[int], n_before_last: int,
                    lang: str | None = None) -> tuple[str, str]:
    """Block 0's direct and total cost on each batch, and the range of their ratio across the batches."""
    rows = [[i, f"{e['direct'][0]:+.3f}", f"{e['total'][0]:+.3f}", f"{r:.2f}", c]
            for i, (e, r, c) in enumerate(zip(per_batch, ratios, counts))]
    same = min(counts) == max(counts)                     # one count in every batch, the same for both languages
    at = f"{min(counts)}" if same else f"{min(counts)} to {max(counts)}"
    if _ko(lang):
        at_ko = f"{min(counts)}" if same else f"{min(counts)}~{max(counts)}"
        return (table(["배치", "블록 0 직접 (nats)", "블록 0 총 (nats)", "총 / 직접",
                       f"총 > 직접인 블록 ({n_before_last}개 중)"], rows),
                f"배치들에 걸쳐 블록 0의 총 비용은 직접 비용의 {min(ratios):.2f}~{max(ratios):.2f}배이며, 모든 "
                f"배치에서 마지막 블록 앞의 블록 {n_before_last}개 중 {at_ko}개에서 총 비용이 직접 비용보다 "
                "큽니다.")
    return (table(["batch", "block 0 direct (nats)", "block 0 total (nats)", "total / direct",
                   f"blocks where total > direct (of {n_before_last})"], rows),
            f"Across the batches, block 0's total cost is {min(ratios):.2f} to {max(ratios):.2f} times its "
            f"direct cost, and the total exceeds the direct cost at {at} of the {n_before_last} blocks before "
            "the last in every batch.")

