"""The evidence appendices' statistics in both editions (issue 41): verdict tables, result lines, preconditions, the
"what we measured" list, the second corpus' report and the run ledger, on known inputs. The English is what these
functions printed before the Korean edition existed; the Korean follows the same numbers, signs and verdicts, takes
its verdict words from vrs_edu.i18n.verdicts, and lines up by display width (a Hangul syllable takes 2 columns)."""
import pytest

from vrs_edu.i18n import evidence as E
from vrs_edu.lab import ledger
from vrs_edu.lab.analysis import (DeclaredTest, Precondition, check_preconditions, format_measured, format_verdicts,
                                  judge, precondition_lines)
from vrs_edu.lab.by_corpus import format_epochs, what_differs
from vrs_edu.lab.corpora import describe

HOLDS = Precondition("sub_epoch", "the runs cannot memorise their training text", "epochs read", "negative", 1.0)
FAILS = Precondition("plateaued", "the coefficients had stopped moving", "share plateaued", "positive", 0.5)
TESTS = (
    DeclaredTest("gain", "the method lowers the loss (paper, Table 5)", "Δ final loss", "same seed", "negative", 0.0,
                 "primary", -0.027, "paper: 2.7389 → 2.7117", requires=("sub_epoch",)),
    DeclaredTest("grows", "λ grows with depth", "slope of λ", "per layer", "positive", 0.0, "ch03", 0.01,
                 "declared: one hundredth per layer", requires=("plateaued",)),
    DeclaredTest("lower", "the method lowers over-smoothing", "Δ cosine", "same seed", "negative", 0.0, "ch03", -0.02,
                 "declared: 0.02"),
    DeclaredTest("cost", "the method costs loss", "Δ loss", "same seed", "positive", 0.0, "ch03", 0.01,
                 "declared: 0.01"),
)
VALUES = {"gain": [-0.004, -0.016, -0.005, -0.006, -0.004], "grows": [0.01, 0.03, -0.01, 0.02, 0.01],
          "lower": [-0.05, -0.04, -0.06, -0.05, -0.045], "cost": [0.01, -0.02, 0.0, 0.015, -0.01]}
FACTS = {"sub_epoch": 0.596, "plateaued": 0.0}


@pytest.fixture(scope="module")
def rows():
    """A primary family of one negligible test, and a Holm family of three: one out of regime (its precondition
    fails), one reproduced, one undecided with its power."""
    return judge(TESTS, VALUES, preconditions=[HOLDS, FAILS], facts=FACTS, seeds=[0, 1, 2, 3, 4])


def test_the_verdict_table_in_both_editions(rows):
    en = format_verdicts(rows, lang="en").splitlines()
    assert en[:9] == [
        "primary (claims): 1 test, no correction needed",
        "  test   mean [95% CI]               vs p Holm verdict                             power",
        "  gain   -0.007 [-0.013, -0.001]  +0.00  0.037 negligible",
        "ch03 (claims): 3 tests, 2 judged, Holm-corrected together",
        "  test   mean [95% CI]               vs p Holm verdict                             power",
        "  grows  +0.012 [-0.006, +0.030]  +0.00    n/a out of regime (would be: undecided)",
        "      precondition not met: plateaued 0.000 (needs > 0.5): fails",
        "  lower  -0.049 [-0.058, -0.040]  +0.00  0.000 reproduced",
        "  cost   -0.001 [-0.019, +0.017]  +0.00  0.883 undecided                           13% at +0.010"]
    assert en[9].startswith("power (undecided tests): the chance to decide")
    ko = format_verdicts(rows, lang="ko").splitlines()
    assert ko[:9] == [
        "검정 묶음 primary (주장): 검정 1개, 보정 필요 없음",
        "  검정   평균 [95% 신뢰구간]     비교값 Holm p 판정                            검정력",
        "  gain   -0.007 [-0.013, -0.001]  +0.00  0.037 무시할 만함",
        "검정 묶음 ch03 (주장): 검정 3개 중 2개 판정, 함께 Holm 보정",
        "  검정   평균 [95% 신뢰구간]     비교값 Holm p 판정                            검정력",
        "  grows  +0.012 [-0.006, +0.030]  +0.00    n/a 적용 범위 밖 (판정한다면: 미정)",
        "      전제 조건 불성립: plateaued 0.000 (필요: > 0.5): 불성립",
        "  lower  -0.049 [-0.058, -0.040]  +0.00  0.000 재현됨",
        "  cost   -0.001 [-0.019, +0.017]  +0.00  0.883 미정                            +0.010에서 13%"]
    assert ko[9].startswith("검정력(미정인 검정): 참 효과가 선언한 크기")
    assert all(E.width(line) <= 100 for line in ko)


def test_korean_table_columns_line_up_by_display_width(rows):
    """The verdict and power columns start at the same display column in the head and in every row, although
    the head's Korean words are twice as wide per character as the numbers."""
    ko = format_verdicts(rows, lang="ko").splitlines()
    head = ko[4]
    verdict_col, power_col = E.width(head[:head.index("판정")]), E.width(head[:head.index("검정력")])
    for line, word in ((ko[5], "적용 범위 밖"), (ko[7], "재현됨"), (ko[8], "미정")):
        assert E.width(line[:line.index(word)]) == verdict_col
    assert E.width(ko[8][:ko[8].index("+0.010에서")]) == power_col
    assert len(head[:head.index("판정")]) < verdict_col   # by characters the head would be too short: Hangul is wide


def test_preconditions_that_hold_and_fail_in_both_editions():
    outcomes = check_preconditions([HOLDS, FAILS], FACTS)
    assert precondition_lines(outcomes, lang="en").splitlines() == [
        "sub_epoch 0.596 (needs < 1): holds (it stands for: the runs cannot memorise their training text)",
        "plateaued 0.000 (needs > 0.5): fails (it stands for: the coefficients had stopped moving)"]
    assert precondition_lines(outcomes, lang="ko").splitlines() == [
        "sub_epoch 0.596 (필요: < 1): 성립 (뜻: the runs cannot memorise their training text)",
        "plateaued 0.000 (필요: > 0.5): 불성립 (뜻: the coefficients had stopped moving)"]
    # a verdict's stored reason is English whatever the edition (judge words it with lang="en")
    assert outcomes["plateaued"].because(lang="en") == "plateaued 0.000 (needs > 0.5): fails"


def test_the_one_line_results_follow_the_verdict(rows):
    gain, grows, lower, cost = rows
    assert gain.sentence(lang="en") == ("-0.007 [95% CI -0.013, -0.001], p (Holm) 0.037: negligible (inside ±0.027, "
                                        "the declared smallest effect)")
    assert gain.sentence(lang="ko") == ("-0.007 [95% 신뢰구간 -0.013, -0.001], Holm 보정 후 p 0.037: 무시할 만함 "
                                        "(선언한 관심 최소 효과 ±0.027 안)")
    assert grows.sentence(lang="en") == ("+0.012 [95% CI -0.006, +0.030]: out of regime (would be: undecided) "
                                         "(precondition not met: plateaued 0.000 (needs > 0.5): fails)")
    assert grows.sentence(lang="ko") == ("+0.012 [95% 신뢰구간 -0.006, +0.030]: 적용 범위 밖 (판정한다면: 미정) "
                                         "(전제 조건 불성립: plateaued 0.000 (필요: > 0.5): 불성립)")
    assert lower.sentence(lang="ko") == "-0.049 [95% 신뢰구간 -0.058, -0.040], Holm 보정 후 p 0.000: 재현됨"
    assert cost.sentence(lang="en") == "-0.001 [95% CI -0.019, +0.017], p (Holm) 0.883: undecided (power 13% at +0.010)"
    assert cost.sentence(lang="ko") == "-0.001 [95% 신뢰구간 -0.019, +0.017], Holm 보정 후 p 0.883: 미정 (+0.010에서 검정력 13%)"


def test_reasons_of_every_form_in_korean():
    assert E.reason("precondition not met: x 0.1 (needs > 0.5): fails (it guards a reproduced reading)", "ko") == \
        "전제 조건 불성립: x 0.1 (필요: > 0.5): 불성립 (재현됨 판정에 필요한 조건)"
    assert E.reason("precondition not met: check c is contradicted; y 2.000 (needs < 1): fails", "ko") == \
        "전제 조건 불성립: 점검 c는 반박됨; y 2.000 (필요: < 1): 불성립"
    # the name after 점검 takes its particle by its reading; names as code for a Markdown table
    assert E.reason("precondition not met: check probe_l is undecided; y 2.000 (needs < 1): fails", "ko", code=True) \
        == "전제 조건 불성립: 점검 `probe_l`은 미정; `y` 2.000 (필요: < 1): 불성립"
    assert E.reason("gain is undecided: no gain for the control to explain", "ko") == \
        "gain: 미정, 대조군이 설명할 이득이 없음"
    assert E.reason("zero variance: every seed gave +0.000; 1 distinct seed, fewer than 3 (seeds [0, 0])", "ko") == \
        "분산 0: 모든 시드가 +0.000; 서로 다른 시드 1개, 3개 미만 (시드 [0, 0])"
    assert E.reason("at every arm: precondition not met: z 0.0 (needs > 0.5): fails", "ko") == \
        "모든 조건에서: 전제 조건 불성립: z 0.0 (필요: > 0.5): 불성립"
    assert E.reason("reproduced at ×1; undecided at ×0.25, ×4 (at ×4: 2 distinct seeds, fewer than 3)", "ko") == \
        "×1에서 재현됨; ×0.25, ×4에서 미정 (×4에서: 서로 다른 시드 2개, 3개 미만)"
    assert E.reason("reproduced at ×1, but the sweep has 1 arm, fewer than 3", "ko") == \
        "×1에서 재현됨, 하지만 스윕의 조건이 1개로 3개 미만"
    assert E.reason("anything", "en") == "anything" and E.reason(None, "ko") is None


def test_what_we_measured_in_both_editions(rows):
    en = format_measured(rows, lang="en").splitlines()
    assert en[:4] == ["NEGLIGIBLE    gain — the method lowers the loss (paper, Table 5)",
                      "OUT OF REGIME grows — λ grows with depth (would be: undecided)",
                      "REPRODUCED    lower — the method lowers over-smoothing",
                      "UNDECIDED     cost — the method costs loss"]
    assert en[5:8] == ["published claims, in this regime:", "  reproduced (1): lower", "  contradicted (0): none"]
    ko = format_measured(rows, lang="ko").splitlines()
    assert ko[:4] == ["무시할 만함  gain — the method lowers the loss (paper, Table 5)",
                      "적용 범위 밖 grows — λ grows with depth (판정한다면: 미정)",
                      "재현됨       lower — the method lowers over-smoothing",
                      "미정         cost — the method costs loss"]
    assert ko[5:8] == ["발표된 주장, 이 조건에서:", "  재현됨 (1): lower", "  반박됨 (0): 없음"]
    assert "설정 점검, 이 조건에서:" in ko
    assert [E.width(line[:line.index(name)]) for line, name in zip(ko, ("gain", "grows", "lower", "cost"))] == \
        [13] * 4   # the names start at one display column


LEDGER = {"x.json": {
    "runs": [{"commit": "9d4ed64aaaa", "date": "2026-12-01T10:00", "wall_time_s": 1650, "cpu_time_s": 2814,
              "cpu_count": 2, "load_average_1m": [1.19, 1.59], "design": {"steps": 240, "lr": 0.003},
              "verdicts": {"a": {"verdict": "undecided", "mean": 0.01}, "b": {"verdict": "out of regime", "mean": 0.02},
                           "c": {"verdict": "undecided", "mean": 0.0}}},
             {"commit": "be01443bbbb", "date": "2026-12-02T10:00", "wall_time_s": 1644, "cpu_time_s": None,
              "cpu_count": 16, "load_average_1m": None, "design": {"steps": 240, "lr": 0.003},
              "verdicts": {"a": {"verdict": "negligible", "mean": 0.012},
                           "d": {"verdict": "reproduced", "mean": 0.5}}}],
    "flips": [{"from": "9d4ed64aaaa", "to": "be01443bbbb", "machine": [2, 16],
               "reason": "new run (code ? → be01443): re-made",
               "changed": [{"name": "a", "before": "undecided", "after": "negligible", "mean_before": 0.01,
                            "mean_after": 0.012},
                           {"name": "d", "before": "(not declared)", "after": "reproduced", "mean_before": None,
                            "mean_after": 0.5}]}]}}


def test_the_ledger_in_both_editions():
    assert ledger.run_lines(LEDGER, "x.json", "en") == [
        "2026-12-01 9d4ed64: 27.5 min, 46.9 CPU-min on 2 cores, load 1.19-1.59; 240 steps, lr 0.003",
        "    1 out of regime, 2 undecided",
        "2026-12-02 be01443: 27.4 min on 16 cores; 240 steps, lr 0.003",
        "    1 negligible, 1 reproduced"]
    assert ledger.run_lines(LEDGER, "x.json", "ko") == [
        "2026-12-01 9d4ed64: 27.5분, CPU 46.9분 (2코어), 부하 1.19-1.59; 240 스텝, 학습률 0.003",
        "    적용 범위 밖 1, 미정 2",
        "2026-12-02 be01443: 27.4분 (16코어); 240 스텝, 학습률 0.003",
        "    무시할 만함 1, 재현됨 1"]
    assert ledger.flip_lines(LEDGER, "x.json", "en") == [
        "2026-12-01 → 2026-12-02 (machine 2 → 16 cores): a undecided → negligible (+0.010 → +0.012)",
        "2026-12-01 → 2026-12-02 (machine 2 → 16 cores): d (not declared) → reproduced (— → +0.500)",
        "    why: new run (code ? → be01443): re-made"]
    assert ledger.flip_lines(LEDGER, "x.json", "ko", labelled=True) == [
        "변경: 2026-12-01 → 2026-12-02 (기계 2 → 16코어): a 미정 → 무시할 만함 (+0.010 → +0.012)",
        "변경: 2026-12-01 → 2026-12-02 (기계 2 → 16코어): d (선언 안 됨) → 재현됨 (— → +0.500)",
        "변경:     사유(기록 원문): new run (code ? → be01443): re-made"]   # the recorded note stays as recorded
    assert ledger.run_lines(LEDGER, "y.json", "ko") == [] and ledger.flip_lines(LEDGER, "y.json", "ko") == []


PART = {"configs": {"baseline": {"train": {"steps": 240, "batch_size": 32}, "model": {"block_size": 64}}},
        "corpus_tokens": {"train": 825241},
        "runs": {"baseline": [{"final_train_loss": 3.8, "final_val_loss": 4.4},
                              {"final_train_loss": 3.788, "final_val_loss": 4.442}]}}
FACTS_OF = [{"name": "docs", "source": "pydoc_data.topics (Python's reference documentation)",
             "licence": "PSF License (ships with Python)", "mb": 0.47, "word_tokens": 89292, "unk_share": 0.052},
            {"name": "film", "source": "s", "licence": "l", "mb": 4.1, "word_tokens": 1000000, "unk_share": 0.058}]


def test_the_corpus_report_lines_in_both_editions():
    assert format_epochs({"kjv": PART}, "baseline", "en").splitlines() == [
        "kjv            825,241 training tokens; a run reads 491,520 = 0.60 epochs",
        "kjv          baseline final loss: train 3.794, validation 4.421 nats (gap +0.627, mean of 2 seeds)"]
    assert format_epochs({"kjv": PART}, "baseline", "ko").splitlines() == [
        "kjv            825,241 학습 토큰; 실행 하나가 읽는 토큰 491,520개 = 0.60 에폭",
        "kjv          baseline 최종 손실: 학습 3.794, 검증 4.421 nats (차이 +0.627, 시드 2개의 평균)"]
    assert E.depends_line(7, 10, "en") == "verdicts that depend on the corpus: 7 of 10 tests"
    assert E.depends_line(7, 10, "ko") == "말뭉치에 따라 달라지는 판정: 검정 10개 중 7개"
    assert E.opposite_line([], "ko") == "두 말뭉치에서 부호가 반대인 평균: 없음"


def test_what_differs_follows_the_numbers_and_the_particles_follow_the_names():
    """film (필름: a final consonant) takes 을/은, docs (독스: none) 를/는; the regime follows the epochs."""
    assert what_differs(FACTS_OF, {"docs": 0.6, "film": 6.12}, lang="en") == (
        "Epochs per run: docs 0.60, film 6.12 — a run reads film more than once (the models can memorise its "
        "training text) and docs less than once (every batch is new). [UNK] shares: docs 5.2%, film 5.8%, within "
        "0.6 points of each other: vocabulary coverage does not separate them.")
    assert what_differs(FACTS_OF, {"docs": 0.6, "film": 6.12}, lang="ko") == (
        "실행당 에폭: docs 0.60, film 6.12 — 실행 하나가 film을 한 번보다 많이 읽고(모델이 학습 텍스트를 외울 수 "
        "있음) docs는 한 번보다 적게 읽습니다(모든 배치가 새 텍스트). [UNK] 비율: docs 5.2%, film 5.8%, 서로 0.6%p "
        "안: 어휘 범위로는 말뭉치들이 갈리지 않습니다.")
    assert "실행 하나가 docs를 한 번보다 많이 읽고" in what_differs(FACTS_OF, {"docs": 6.12, "film": 0.6}, lang="ko")
    assert "film은 한 번보다 적게" in what_differs(FACTS_OF, {"docs": 6.12, "film": 0.6}, lang="ko")
    apart = what_differs(FACTS_OF, {"docs": 1.5, "film": 4.0}, unk_close=0.001, lang="ko")
    assert "실행 하나가 film을 docs보다 2.7배 자주 읽습니다" in apart and "0.6%p 차이" in apart
    assert "a run reads film 2.7× as often as docs" in what_differs(FACTS_OF, {"docs": 1.5, "film": 4.0}, lang="en")


def test_the_corpus_facts_table_in_both_editions():
    assert describe(facts=FACTS_OF, lang="en").splitlines()[::2] == [
        "| corpus | source | licence | MB | word tokens | [UNK] share (2,048-word vocab) |",
        "| `docs` | pydoc_data.topics (Python's reference documentation) | PSF License (ships with Python) | 0.47 | "
        "89,292 | 5.2% |"]
    assert describe(facts=FACTS_OF, lang="ko").splitlines()[::2] == [
        "| 말뭉치 | 출처 | 라이선스 | MB | 단어 토큰 | [UNK] 비율 (2,048단어 어휘) |",
        "| `docs` | pydoc_data.topics (Python 참조 문서) | PSF 라이선스 (Python과 함께 배포됨) | 0.47 | 89,292 | 5.2% |"]


def test_every_named_corpus_has_its_source_and_licence_in_korean():
    from vrs_edu.lab.corpora import NAMED
    for name, (_, source, licence) in NAMED.items():
        assert source in E.CORPUS_KO and licence in E.CORPUS_KO, f"corpus {name}: add its Korean to CORPUS_KO"


def test_padding_and_wrapping_count_display_columns():
    assert E.width("재현됨") == 6 and E.width("abc") == 3
    assert E.pad("미정", 6) == "미정  " and E.pad("미정", 6, ">") == "  미정" and E.pad("abc", 5) == f"{'abc':5s}"
    with pytest.raises(ValueError, match="align"):
        E.pad("x", 3, "^")
    text = "가나다 " * 30
    assert all(E.width(line) <= 40 for line in E.fill(text, 40, subsequent_indent="  ").splitlines())
    english = "a plain sentence, " * 10
    assert E.fill(english, 30, break_on_hyphens=False) == __import__("textwrap").fill(english, 30,
                                                                                      break_on_hyphens=False)
