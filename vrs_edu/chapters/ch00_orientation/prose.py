"""Chapter 00's computed sentences and tables, in each edition: every function takes the numbers it states and
``lang`` (None: the running notebook's edition) and returns Markdown for :func:`vrs_edu.viz.prose.say` (or a plain
line for ``print``). The English words are the chapter's as they were in its code cells."""
from __future__ import annotations

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.viz.prose import table

#: the Korean edition's title and question of each chapter (book.toml holds the English ones; the titles are the
#: Korean README's)
CHAPTERS_KO = {
    "00": ("오리엔테이션", "이 강좌는 어떻게 사용하며, 잔차 스트림은 어떤 모습일까요?"),
    "01": ("두 축: 깊이를 따라 흐르는 잔차 스트림", "잔차 스트림은 단순한 누적일까요?"),
    "02": ("QK는 경로를 정하고, V는 내용을 나른다", "깊은 층은 새로 계산한 QK 패턴에 얼마나 의존할까요?"),
    "03": ("Value residual 학습", "V_1을 뒤쪽 층에 섞으면 무엇이 바뀔까요(손실, 엔트로피, 평활화)?"),
    "04": ("값 뱅크", "깊은 층은 어느 경로(Q, K, V)로 x0을 다시 읽을까요?"),
    "05": ("시퀀스로서의 깊이", "잔차 스트림이 깊이에 걸친 선택적 읽기(깊이 방향의 ShortSWA)가 될 수 있을까요?"),
    "06": ("V 재사용이 주는 것", "효율이나 해석 가능성이 QK가 아니라 V 재사용에서 나올 수 있을까요?"),
    "07": ("실제 사전 학습 모델의 내부", "여기서 아무도 학습시키지 않은 가중치에서도 답이 성립할까요?"),
    "08": ("실제 30층 디코더", "강좌의 답이 실제 깊은 디코더의 학습된 가중치에서도 성립할까요?"),
    "09": ("네 가지 답", "네 가지 답은 무엇이며, 'QK만으로는 절반만 본다'는 어디에서 성립할까요?"),
}


def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def environment_line(python: str, threads: int, lang: str | None = None) -> str:
    """The first line of the environment check: the Python version and the torch threads."""
    if _ko(lang):
        return f"Python {python}, torch 스레드 {threads}개"
    return f"Python {python}, {threads} torch threads"


def chapters_table(chapters, lang: str | None = None) -> str:
    """The course's chapters (:class:`vrs_edu.course.book.Chapter`): number, title, question, study and run time."""
    if _ko(lang):
        rows = [[c.number, *CHAPTERS_KO[c.number], f"{c.study_min}분" if c.study_min else "—", f"≤ {c.budget_s}초"]
                for c in chapters]
        return table(["#", "장", "답하는 질문", "학습", "실행"], rows, align="llrrr")
    rows = [[c.number, c.title.split("·", 1)[1].strip(), c.question,
             f"{c.study_min} min" if c.study_min else "—", f"≤ {c.budget_s} s"] for c in chapters]
    return table(["#", "chapter", "the question it answers", "study", "run"], rows, align="llrrr")


def study_sentence(minutes: int, appendices, lang: str | None = None) -> str:
    """The course's study time, and the appendices of evidence (:class:`vrs_edu.course.book.Appendix`)."""
    if _ko(lang):
        names = ", ".join(f"부록 {a.chapter}" for a in appendices)
        return (f"모두 합해 학습 시간은 {minutes}분({minutes / 60:.1f}시간)입니다. 03–05장에는 각각 근거를 모은 "
                f"부록(실행 장부, 두 번째 말뭉치의 표, 튜닝 이력)이 있으며, 각 장의 *얼마나 확실한가?* 절이 "
                f"그것을 가리킵니다: {names}. 계속 나아가는 데 부록을 읽을 필요는 없습니다.")
    names = ", ".join(a.title.split("·")[0].strip() for a in appendices)
    return (f"In all, {minutes} minutes of study ({minutes / 60:.1f} hours). Chapters 03–05 "
            f"each have an appendix of evidence (run ledgers, second-corpus tables, tuning histories) that "
            f"their *How sure are we?* links: {names}. You need not read them to go on.")


def stack_lines(shape: tuple, text: str, lang: str | None = None) -> str:
    """The depth stack's shape and the start of the first sequence (two printed lines)."""
    if _ko(lang):
        return f"깊이 스택의 모양 (L+1, B, T, D): {shape}\n첫 시퀀스의 텍스트: {text!r}"
    return f"depth stack shape (L+1, B, T, D): {shape}\ntext of the first sequence: {text!r}"


def training_sentence(before: list[float], after: list[float], val_loss: float, grows: list[int], steps: int,
                      lang: str | None = None) -> str:
    """The stream's norm at the embedding and after the last block, untrained and after ``steps`` of training."""
    n = len(before) - 1
    if _ko(lang):
        return (f"학습 전에는 노름이 임베딩에서 {before[0]:.2f}, 마지막 블록 뒤에서 {before[-1]:.2f}입니다. {steps}스텝 "
                f"학습한 뒤(검증 손실 {val_loss:.2f} nats)에는 {after[-1]:.2f}에서 끝납니다. 노름은 학습 전에는 "
                f"블록 {n}개 중 {grows[0]}개에서, 학습 후에는 {grows[1]}개에서 커집니다.")
    return (f"Untrained, the norm rises from {before[0]:.2f} at the embedding to {before[-1]:.2f} after "
            f"the last block; after {steps} steps (validation loss {val_loss:.2f} nats) it ends "
            f"at {after[-1]:.2f}. It grows at {grows[0]} of {n} blocks before training and "
            f"at {grows[1]} after.")


def norms_line(diff: float, lang: str | None = None) -> str:
    """The learner's norms against the package's on the trained model."""
    if _ko(lang):
        return f"여러분의 노름과 패키지의 노름(학습된 모델)의 최대 차이: {diff:.1e}"
    return f"your norms vs the package's, trained model: largest difference {diff:.1e}"


def ratio_table(ratios: dict, lang: str | None = None) -> str:
    """The untrained model's final / embedding norm ratio by (layers, init scale)."""
    rows = [[n, f"{s:.2f}", f"{r:.2f}"] for (n, s), r in ratios.items()]
    columns = ["층 수", "초기 스케일", "최종 / 임베딩"] if _ko(lang) else ["layers", "init scale", "final / embedding"]
    return table(columns, rows)


def ratio_sentence(d_layers: float, d_step: float, lang: str | None = None) -> str:
    """How the ratio changes from 6 to 24 layers (``d_layers``, at two decimals) and with one step of init scale."""
    if _ko(lang):
        change = ("소수 둘째 자리까지 변하지 않습니다" if d_layers == 0 else f"{d_layers:+.2f}만큼 변합니다")
        return (f"층을 6개에서 24개로 늘려도(초기 스케일 1.00) 비율은 {change}. 초기 스케일을 한 단계 올리면"
                f"(1.00 → 1.25, 6층) 비율은 {d_step:+.2f}만큼 변합니다.")
    return ("From 6 to 24 layers (init scale 1.00) the ratio "
            + ("does not change at two decimals" if d_layers == 0 else f"changes by {d_layers:+.2f}")
            + f"; one step of init scale (1.00 → 1.25, 6 layers) changes it by {d_step:+.2f}.")


def answer(before: list[float], after: list[float], grows: int, steps: int, lang: str | None = None) -> str:
    """The chapter's answer: the stream is a running sum whose norm grows along depth."""
    n = len(after) - 1
    if _ko(lang):
        final = attach(f"{after[-1]:.2f}", "으로/로")
        return (f"토큰의 잔차 스트림은 누적 합입니다: 임베딩에 모든 블록이 더하는 것을 더한 것입니다. 이 {n}층 모델에서 "
                f"그 노름은 임베딩에서 {after[0]:.2f}, 마지막 블록 뒤에서 {final} 커지며({steps}스텝 학습 "
                f"뒤; 학습 전에는 {before[-1]:.2f}), 블록 {n}개 중 {grows}개에서 커집니다. 01장은 그 합이 "
                "*단순한* 누적인지 묻습니다.")
    return ("A token's residual stream is a running sum: the embedding plus what every block adds. In "
            f"this {n}-layer model its norm grows from {after[0]:.2f} at the embedding to {after[-1]:.2f} "
            f"after the last block (after {steps} steps of training; {before[-1]:.2f} untrained), growing at "
            f"{grows} of {n} blocks. Chapter 01 asks whether that sum is *mere* "
            "accumulation.")


def seeds_table(seeds: list[int], norms: list[list[float]], grow_all: list[int], steps: int,
                lang: str | None = None) -> tuple[str, str]:
    """The untrained stream's norms for each seed, at how many blocks it grows in every seed, and that the trained
    numbers come from one run of ``steps``."""
    rows = [[s, f"{n[0]:.2f}", f"{n[-1]:.2f}", g] for s, n, g in zip(seeds, norms, grow_all)]
    n_blocks = len(norms[0]) - 1
    same = min(grow_all) == max(grow_all)
    if _ko(lang):
        at = f"{grow_all[0]}" if same else f"{min(grow_all)}~{max(grow_all)}"
        return (table(["시드", "임베딩에서의 노름", "마지막 블록 뒤", f"노름이 커지는 블록 ({n_blocks}개 중)"], rows),
                f"학습 전에는 시드 {len(seeds)}개 모두에서 스트림이 블록 {n_blocks}개 중 {at}개에서 커집니다. 학습 후 "
                f"수치는 {steps}스텝 실행 한 번에서 나온 것입니다. 여러 시드의 실행을 비교하는 방법은 03장에서 다룹니다.")
    at = f"{grow_all[0]}" if same else f"{min(grow_all)} to {max(grow_all)}"
    return (table(["seed", "norm at the embedding", "after the last block", f"blocks where it grows (of {n_blocks})"],
                  rows),
            f"Untrained, the stream grows at {at} of {n_blocks} blocks in each of the {len(seeds)} seeds. The trained "
            f"numbers come from one run of {steps} steps: chapter 03 shows how runs of several seeds are "
            "compared.")
