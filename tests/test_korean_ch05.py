"""Chapter 05's sentences in Korean (vrs_edu.chapters.ch05_depth_as_sequence.prose, ``lang="ko"``): the same words
from the same numbers and verdicts as the English, written for Korean grammar, the particle after a substituted
name chosen by its reading. The verdict words come from the shared vrs_edu.lab.verdict_words; here they are
replaced by a fixed Korean table so that the sentence is checked on its own."""
from types import SimpleNamespace

import pytest

from vrs_edu.chapters.ch05_depth_as_sequence import prose as dp
from vrs_edu.lab.results import interval

WORDS = {"reproduced": "재현됨", "contradicted": "반박됨", "undecided": "미정", "negligible": "무시할 만함"}


@pytest.fixture(autouse=True)
def korean_verdict_words(monkeypatch):
    def label(row, lang=None):
        verdict = row if isinstance(row, str) else row["verdict"] if isinstance(row, dict) else row.verdict
        return WORDS[verdict]
    monkeypatch.setattr(dp, "verdict_label", label)


def row(name, mean, ci, verdict, family="ch05"):
    return SimpleNamespace(test=SimpleNamespace(name=name, family=family), mean=mean, ci=ci, verdict=verdict,
                           reason=None, interval=lambda: interval(mean, ci))


LOSS = [row("denseformer_loss", -0.089, (-0.132, -0.047), "reproduced"),
        row("mudd_loss", -0.098, (-0.146, -0.050), "reproduced"),
        row("shortswa-k2_loss", 0.010, (-0.010, 0.030), "undecided"),
        row("shortswa-full_loss", 0.007, (-0.001, 0.016), "undecided")]
DEPTH_ATTENTION = row("depth_attention_loss", -0.023, (-0.040, -0.006), "reproduced")
EFFECTS = ([{"name": r.test.name.removesuffix("_loss"), "mean": r.mean, "ci": r.ci, "verdict": r.verdict}
            for r in LOSS]
           + [{"name": "depth_attention", "mean": -0.023, "ci": (-0.040, -0.006), "verdict": "reproduced"},
              {"name": "attnres_qkv", "mean": -0.007, "ci": (-0.048, 0.034), "verdict": "check: undecided"}])


def test_the_effect_sentence_in_korean_when_shortswa_over_depth_is_not_among_the_winners():
    assert dp.effect_sentence(EFFECTS, lang="ko") == (
        "깊이에 걸친 읽기 5가지 가운데 Depth-Attention을 포함해 3가지가 잔차 합보다 손실을 낮추며, 이는 검정 횟수를 "
        "감안해도 결정된 결과입니다. 가장 크게 낮춘 mudd는 손실을 0.098 nats 낮춥니다(재현됨). 이 장의 질문이 "
        "가리키는 읽기인 깊이 방향 ShortSWA는 그 안에 들지 않습니다(shortswa-k2 +0.010 nats, 미정; shortswa-full "
        "+0.007 nats, 미정). 손실을 높이는 읽기는 없으며, 결정된 결과입니다.")
    assert dp.effect_sentence(EFFECTS, lang="en").startswith("3 of the 5 reads over depth")


def test_the_effect_sentence_in_korean_picks_the_particle_by_the_names_reading():
    won = [{**e, "verdict": "reproduced"} if e["name"] == "shortswa-k2" else e for e in EFFECTS]
    won += [{"name": "vertical", "mean": 0.02, "ci": (0.01, 0.03), "verdict": "contradicted"},
            {"name": "dca", "mean": 0.001, "ci": (-0.001, 0.003), "verdict": "negligible"}]
    text = dp.effect_sentence(won, lang="ko")
    assert "깊이 방향 ShortSWA는 shortswa-k2로 이깁니다(shortswa-k2 +0.010 nats, 재현됨; " in text   # 2 (이): 로
    assert "vertical은 손실을 높이며, 결정된 결과입니다." in text                                     # l (엘): 은
    assert text.endswith("dca는 부호와 상관없이 손실을 실행 전에 선언한 관심 최소 효과보다 작게 바꿉니다. "
                         "무시할 만함, 의미를 갖기에는 너무 작음.")                                   # a (에이): 는


def test_the_short_answer_in_korean_states_the_opening_the_best_read_and_the_stream_test():
    assert dp.short_answer(LOSS, DEPTH_ATTENTION, ["out of regime (would be: contradicted)"], "a toy",
                           lang="ko") == (
        "**부분적으로**, 이 조건에서는 — a toy. 깊이에 걸친 읽기 5가지(Depth-Attention 포함) 가운데 3가지가 손실을 "
        "낮추며, 결정된 결과입니다. 가장 크게 낮춘 mudd는 손실을 0.098 nats 낮춥니다(재현됨). 질문이 가리키는 읽기인 "
        "깊이 방향 ShortSWA는 그 안에 들지 않습니다. 윈도 2개가 손실을 +0.007에서 +0.010 nats만큼 바꿉니다(미정). "
        "Q와 K가 최근 층을 읽는 동안 깊은 V가 임베딩을 고르는가는 서술(description)일 뿐 판정하지 않습니다. 그 전제, "
        "곧 깊은 입력이 토큰 정체성을 잃었다는 것이 이 장난감 모델들에서 성립하지 않기 때문입니다(V가 실제로 하는 "
        "일은 위의 임베딩 읽기가 보여 줍니다). 검정하는 스트림별 주장, 곧 V가 어텐션 출력보다 MLP 출력을 선호한다는 "
        "주장의 판정은 out of regime (would be: contradicted)입니다.")
    won = [row("shortswa-k2_loss", -0.02, (-0.03, -0.01), "reproduced")]
    yes = dp.short_answer(won, DEPTH_ATTENTION, ["반박됨"], "a toy", lang="ko")
    assert yes.startswith("**예**, 이 조건에서는 — a toy. 깊이에 걸친 읽기 2가지(Depth-Attention 포함) 가운데 2가지가")
    assert "가장 크게 낮춘 depth_attention은 손실을 0.023 nats 낮춥니다(재현됨)." in yes       # n (엔): 은
    assert yes.endswith("MLP 출력을 선호한다는 주장의 판정은 반박됨입니다.")
    none = dp.short_answer([row("shortswa-k2_loss", 0.01, (0.0, 0.02), "undecided")],
                           row("depth_attention_loss", 0.0, (-0.01, 0.01), "undecided"), [], "a toy", lang="ko")
    assert none.startswith("**보이지 않음**")
    assert "가운데 손실을 낮추는 것은 없으며" in none and none.endswith("주장의 판정은 실행되지 않음입니다.")


def test_the_loss_figure_and_the_window_widget_speak_the_edition(monkeypatch, capsys):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vrs_edu.chapters.ch05_depth_as_sequence import figures
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    fig = figures.plot_loss_effects(EFFECTS)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "최종 검증 손실 − 잔차의 손실 (nats; < 0: 더 좋음)"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "denseformer (재현됨)" and labels[-1] == "attnres_qkv (점검: 미정)"
    plt.close(fig)
    fig, _ = figures.window_figure(4, 2)
    assert fig.axes[0].get_title() == "읽을 수 있는 출처(검정), K = 2"
    assert fig.axes[0].get_ylabel() == "읽는 층 l"
    plt.close(fig)
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    fig = figures.plot_loss_effects(EFFECTS)
    assert fig.axes[0].get_yticklabels()[-1].get_text() == "attnres_qkv (check: undecided)"
    plt.close(fig)


def test_the_stack_exercise_stub_hint_speaks_the_edition(monkeypatch, capsys):
    from vrs_edu.course.exercises.ch05 import check_depth_swa_stack

    def stub(*args):
        raise NotImplementedError

    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    check_depth_swa_stack(stub)
    assert "한 번에 층 l 하나씩, 모든 토큰은 한꺼번에 처리하세요." in " ".join(capsys.readouterr().out.split())
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    check_depth_swa_stack(stub)
    assert "one layer l at a time, every token at once" in " ".join(capsys.readouterr().out.split())
