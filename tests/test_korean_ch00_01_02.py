"""Chapters 00-02 in Korean: the exercise checkers' frame, names and hints, and the chapters' computed sentences
(vrs_edu/chapters/ch0[0-2]_*/prose.py) with known inputs; the English stays as before."""
from pathlib import Path

import nbformat

from vrs_edu.course.checks import MESSAGES, Mistake, check_function, localized, with_hints
from vrs_edu.course.exercises import ch01, ch02


def _todo(*args):
    raise NotImplementedError


def test_a_checker_text_is_a_string_a_pair_or_a_function():
    assert localized("attend", "ko") == "attend"
    assert localized(("attend", "값의 가중합"), "ko") == "값의 가중합"
    assert localized(("attend", "값의 가중합"), "en") == "attend"
    assert localized(lambda lang: {"en": "a", "ko": "가"}[lang], "ko") == "가"
    pair = with_hints([Mistake(abs, "wrong")], ["틀렸습니다"])[0]
    assert pair.fn is abs and pair.hint == ("wrong", "틀렸습니다")


def test_the_frame_speaks_korean(capsys):
    assert check_function(("double", "두 배"), _todo, lambda x: 2 * x, [(1.0,)], stub_hint=("twice", "두 배로"),
                          lang="ko") is False
    assert capsys.readouterr().out == ("✗ 두 배: 아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요.\n"
                                       "    힌트: 두 배로\n")
    assert check_function(("double", "두 배"), lambda x: 3 * x, lambda x: 2 * x, [(1.0,)], lang="ko") is False
    assert capsys.readouterr().out == "✗ 두 배: 사례 0: 기대한 값은 2.0, 받은 값은 3.0입니다 [입력: x=1.0]\n"
    assert check_function(("double", "두 배"), lambda x: 2 * x, lambda x: 2 * x, [(1.0,)], lang="ko") is True
    assert capsys.readouterr().out == "✓ 두 배: 공개 검사를 통과했습니다 — 숨은 검사는 채점할 때 실행됩니다\n"
    assert check_function(("double", "두 배"), lambda x: 2 * x, lambda x: 2 * x, [(1.0,)], graded=False,
                          lang="en") is True
    assert capsys.readouterr().out == "✓ double: public checks passed\n"


def test_chapter_02_checkers_name_their_mistakes_in_korean(capsys):
    for mistakes, hints in ((ch02.PATTERN_MISTAKES, ch02.PATTERN_HINTS_KO), (ch02.ATTEND_MISTAKES,
                            ch02.ATTEND_HINTS_KO), (ch02.SWAP_MISTAKES, ch02.SWAP_HINTS_KO),
                            (ch02.CONTRIBUTION_MISTAKES, ch02.CONTRIBUTION_HINTS_KO)):
        assert len(mistakes) == len(hints) and all(isinstance(m.hint, str) for m in mistakes)
    assert ch02.check_attend(ch02.ATTEND_MISTAKES[3].fn, lang="ko") is False
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("✗ 값의 가중합: 사례 0: 헤드에 대해 합했습니다. 헤드마다 자기 값을 옮기므로 헤드 축을 남기세요 "
                          "[입력: pattern=모양 (2, 3, 5, 5)의 텐서")
    assert ch02.check_attend(ch02.ATTEND_MISTAKES[3].fn, lang="en") is False
    assert "✗ attend: case 0: you summed over heads" in capsys.readouterr().out
    for check, name in ((ch02.check_attention_pattern, "어텐션 패턴"), (ch02.check_value_swap, "값 교환"),
                        (ch02.check_head_contributions, "헤드 기여")):
        assert check(_todo, lang="ko") is False
        assert capsys.readouterr().out.startswith(f"✗ {name}: 아직 구현하지 않았습니다")


def test_chapter_01_block_effect_hint_has_a_frame(capsys):
    assert ch01.check_block_effect(_todo, lang="ko") is False
    out = " ".join(capsys.readouterr().out.split())
    assert out == ("✗ 블록 효과: 아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요. 힌트: 다음 두 손실에서 "
                   "각각 원래 손실을 뺍니다: (1) 최종 상태에서 블록의 쓰기를 빼고 모델 자신의 노름과 언임베딩으로 읽은 "
                   "손실, (2) 훅으로 블록의 쓰기를 0으로 만든 순전파의 손실")


def test_the_chapters_computed_sentences_in_korean():
    """Every Korean sentence builder of chapters 00-02, with known inputs (the numbers of the stored notebooks)."""
    from types import SimpleNamespace as NS

    import torch

    from vrs_edu.chapters.ch00_orientation import prose as p0
    from vrs_edu.chapters.ch01_two_axes import prose as p1
    from vrs_edu.chapters.ch02_qk_routes_v_carries import prose as p2
    from vrs_edu.lab.experiments import provenance

    assert p0.environment_line('3.11.7', 1, lang='ko') == 'Python 3.11.7, torch 스레드 1개'
    assert p0.study_sentence(420, [NS(chapter='03', title='Appendix 03 · x'), NS(chapter='04', title='Appendix 04 · y')], lang='ko') == '모두 합해 학습 시간은 420분(7.0시간)입니다. 03–05장에는 각각 근거를 모은 부록(실행 장부, 두 번째 말뭉치의 표, 튜닝 이력)이 있으며, 각 장의 *얼마나 확실한가?* 절이 그것을 가리킵니다: 부록 03, 부록 04. 계속 나아가는 데 부록을 읽을 필요는 없습니다.'
    assert p0.stack_lines((7, 8, 64, 64), "ab\nc", lang='ko') == "깊이 스택의 모양 (L+1, B, T, D): (7, 8, 64, 64)\n첫 시퀀스의 텍스트: 'ab\\nc'"
    assert p0.training_sentence([0.16, 0.2, 0.24], [0.32, 4.0, 8.38], 1.95, [2, 1], 60, lang='ko') == '학습 전에는 노름이 임베딩에서 0.16, 마지막 블록 뒤에서 0.24입니다. 60스텝 학습한 뒤(검증 손실 1.95 nats)에는 8.38에서 끝납니다. 노름은 학습 전에는 블록 2개 중 2개에서, 학습 후에는 1개에서 커집니다.'
    assert p0.norms_line(0.0, lang='ko') == '여러분의 노름과 패키지의 노름(학습된 모델)의 최대 차이: 0.0e+00'
    assert p0.ratio_sentence(0, 0.2, lang='ko') == '층을 6개에서 24개로 늘려도(초기 스케일 1.00) 비율은 소수 둘째 자리까지 변하지 않습니다. 초기 스케일을 한 단계 올리면(1.00 → 1.25, 6층) 비율은 +0.20만큼 변합니다.'
    assert p0.ratio_sentence(0.01, 0.2, lang='ko') == '층을 6개에서 24개로 늘려도(초기 스케일 1.00) 비율은 +0.01만큼 변합니다. 초기 스케일을 한 단계 올리면(1.00 → 1.25, 6층) 비율은 +0.20만큼 변합니다.'
    assert p0.answer([0.16, 0.24], [0.32, 8.38], 1, 60, lang='ko') == '토큰의 잔차 스트림은 누적 합입니다: 임베딩에 모든 블록이 더하는 것을 더한 것입니다. 이 1층 모델에서 그 노름은 임베딩에서 0.32, 마지막 블록 뒤에서 8.38로 커지며(60스텝 학습 뒤; 학습 전에는 0.24), 블록 1개 중 1개에서 커집니다. 01장은 그 합이 *단순한* 누적인지 묻습니다.'
    assert p0.seeds_table([0, 1], [[0.16, 0.24], [0.15, 0.22]], [1, 1], 60, lang='ko') == ('| 시드 | 임베딩에서의 노름 | 마지막 블록 뒤 | 노름이 커지는 블록 (1개 중) |\n|:---|---:|---:|---:|\n| 0 | 0.16 | 0.24 | 1 |\n| 1 | 0.15 | 0.22 | 1 |', '학습 전에는 시드 2개 모두에서 스트림이 블록 1개 중 1개에서 커집니다. 학습 후 수치는 60스텝 실행 한 번에서 나온 것입니다. 여러 시드의 실행을 비교하는 방법은 03장에서 다룹니다.')
    assert p0.ratio_table({(6, 1.0): 1.45}, lang='ko') == '| 층 수 | 초기 스케일 | 최종 / 임베딩 |\n|:---|---:|---:|\n| 6 | 1.00 | 1.45 |'
    assert p1.checkpoint_line(308096, 2000, 1.221, 3.238, lang='ko') == '파라미터 308,096개, 2000스텝; 검증 손실 1.221 nats (유니그램 3.238 nats)'
    assert p1.effects_sentence(1.406, 3.734, 5, 5, lang='ko') == '블록 0을 없애면 총 +3.734 nats가 들지만 직접 비용은 +1.406뿐입니다(2.66×). 뒤쪽 블록들이 블록 0이 쓴 것을 읽기 때문입니다. 마지막 블록 앞의 블록 5개 중 5개에서 총 비용이 직접 비용보다 큽니다.'
    assert p1.two_axes_sentence(1.18, 21.16, 1.0, 0.23, 53, True, lang='ko') == '깊이를 따라 평균 노름은 1.18에서 21.16으로 커지고, x0과의 평균 코사인은 1.00에서 0.23으로 떨어집니다(이 문장(53자)이 검증 분할에 있는가: 예).'
    assert p1.rebuilt_line(1e-6, 1e-5, 18.4, lang='ko') == '|h_L - (임베딩 + 블록 출력의 합)|의 최댓값: 1e-05 미만  (h_L의 성분은 최대 18.4)'
    assert p1.stack_line(1.9e-6, lang='ko') == '여러분의 스택과 모델의 추적(trace)의 최대 차이: 1.9e-06'
    assert p1.attribution_sentence("d over in insert", "i", 7.551, 0.758, 13, 7.551, [(3.122, "mlp 5"), (1.0, "embed")], lang='ko') == "'d over in insert' 뒤에서 모델은 다음 문자 'i'에 로짓 7.551(확률 0.758)을 줍니다. 그 기여 13개를 더하면 7.551입니다. 가장 큰 기여: mlp 5 +3.122, 임베딩 +1.000."
    assert p1.contributions_line(7.551, 7.551, lang='ko') == '여러분의 기여의 합은 7.551, 모델의 로짓은 7.551입니다'
    assert p1.block_effect_line(1.272, 3.702, lang='ko') == '검증 배치 하나에서 블록 0의 효과: 직접 +1.272, 총 +3.702 nats'
    assert p1.depth_table([1.19], [1.0], {"loss": [4.58], "acc": [0.093], "agree": [0.113]}, 3.238, lang='ko') == ('| 깊이 | 노름 | cos(x0) | 렌즈 손실 | 렌즈 정확도 | 최종 예측과 일치 |\n|:---|---:|---:|---:|---:|---:|\n| 0 | 1.190 | 1.000 | 4.580 | 0.093 | 0.113 |', '유니그램 기준선(문맥을 전혀 보지 않음): 3.238 nats.')
    assert p1.last_depth_sentence(1.464, 4, 128, 1.221, lang='ko') == '마지막 깊이에서 렌즈는 모델 자신의 출력을 읽습니다: 이 배치 4개(검증 분할 앞부분의 시퀀스 128개)에서 1.464 nats로, 검증 분할 전체에서 잰 체크포인트의 검증 손실 1.221 nats보다 높습니다. 차이는 렌즈가 아니라 텍스트에서 옵니다(이 배치들은 분할 전체보다 어렵습니다).'
    assert p1.live_lens_table([3.78, 2.357], [4.58, 1.464], 2.357, 40, lang='ko') == ('| 깊이 | 렌즈 손실, 40스텝 | 렌즈 손실, 체크포인트 |\n|:---|---:|---:|\n| 0 | 3.780 | 4.580 |\n| 1 | 2.357 | 1.464 |', '40스텝 뒤 실시간 모델의 검증 손실은 2.357 nats입니다. 그 블록들은 깊이 0 이후 렌즈 손실을 1.423 nats 줄이고, 체크포인트의 블록들은 3.116 nats 줄입니다.')
    assert p1.silenced_table(1.106, "i", 0.758, [{"loss": 6.054, "target_prob": 0.001}], lang='ko') == ("학습된 그대로: 문장에서 손실 1.106 nats, p(다음 = 'i') = 0.758. 블록을 한 번에 하나씩 끈 결과:", '| 끈 블록 | 문장에서의 손실 (nats) | p(다음) |\n|:---|---:|---:|\n| 0 | 6.054 | 0.001 |')
    assert p1.answer(6, 1e-6, 1e-5, 3.734, 1.406, 4.58, 1.464, lang='ko') == '잔차 스트림은 층들을 단순한 누적으로 *연결*합니다: 최종 상태는 임베딩과 블록 출력 6개의 합과 1e-05 이내로 같으며, 모든 항의 가중치는 1입니다. 그러나 *계산*은 서로 독립인 항들의 더미가 아닙니다: 블록 0을 없애면 총 3.73 nats가 들지만 직접 비용은 1.41 nats입니다. 뒤쪽 블록들이 블록 0이 쓴 것 위에 쌓아 올리기 때문입니다. 층별로 읽으면 로짓 렌즈 손실은 4.58에서 1.46 nats로 떨어집니다. 02장은 다른 축인 어텐션을 열고, 어텐션이 어디를 보는지와 무엇을 옮기는지를 나눕니다.'
    assert p1.per_batch_table([{"direct": [1.272], "total": [3.702]}], [2.91], [5], 5, lang='ko') == ('| 배치 | 블록 0 직접 (nats) | 블록 0 총 (nats) | 총 / 직접 | 총 > 직접인 블록 (5개 중) |\n|:---|---:|---:|---:|---:|\n| 0 | +1.272 | +3.702 | 2.91 | 5 |', '배치들에 걸쳐 블록 0의 총 비용은 직접 비용의 2.91~2.91배이며, 모든 배치에서 마지막 블록 앞의 블록 5개 중 5개에서 총 비용이 직접 비용보다 큽니다.')
    assert p1.component_label("embed", lang='ko') == '임베딩'
    assert p2.model_line(6, 4, 1.221, lang='ko') == '6층 × 헤드 4개; 검증 손실 1.221 nats'
    assert p2.swap_sentence([1.42, 2.13], 1.464, lang='ko') == '값 교환은 2개 층 중 2개에서 패턴 교환보다 비용이 크며, 그 비용은 패턴 교환의 1.42~2.13배입니다(원래 손실 1.464 nats).'
    assert p2.difference_line("pattern", 0.0, lang='ko') == '층 3, 여러분의 패턴과 모델의 패턴의 최대 차이: 0.0e+00'
    assert p2.difference_line("z", 0.0, lang='ko') == '층 3, 여러분의 z와 모델의 z의 최대 차이: 0.0e+00'
    assert p2.value_swap_line(1.357, 1.742, lang='ko') == '마지막 층, 첫 배치: 원래 손실 1.357, 값을 교환하면 1.742 nats'
    assert p2.norm_view_sentence(0, 0, {"token": " ", "count": 8, "weight": 0.16, "norm": 0.05, "f_norm": 0.17, "f_norm_others": 0.93}, 52, 3, 16, lang='ko') == '두 지도가 가장 다른 헤드는 층 0, 헤드 0입니다. 가장 크게 바뀌는 곳은 52자 문장 전체의 공백 8개입니다(그려진 16자 안에는 3개). 이 문자들은 자신을 볼 수 있는 쿼리들의 가중치 중 0.16을 받지만 노름 지도에서는 0.05만 받습니다. 그 벡터가 짧기 때문입니다: ‖f(x)‖ 0.17, 다른 문자들은 0.93.'
    assert p2.map_distance_sentence(24, 0.03, 0.12, 0.06, lang='ko') == '헤드 24개에 걸쳐 두 지도의 차이는 0.03~0.12, 평균 0.06입니다(0: 같은 지도, 1: 공통된 소스가 없음).'
    assert p2.contributions_line(0, 0, True, False, lang='ko') == '층 0, 헤드 0: 소스에 대해 합하면 여러분의 벡터가 헤드가 쓰는 것과 같은가(1e-5 이내): 예; 쿼리마다 정규화한 여러분의 노름 지도가 그림의 것과 같은가: 아니요'
    assert p2.frozen_sentence(1.152, range(3, 6), {"uniform": 0.098, "batch mean": 0.07}, 5, 5, lang='ko') == '균등한 어텐션 경로는 층 0에 +1.152 nats의 비용을 치르게 하지만, 깊은 층 3–5에는 평균적으로 원래 손실의 9.8 %입니다. 위치를 유지하는 배치 평균 패턴은 깊은 층에 7.0 %의 비용을 치르게 합니다. 이전 층의 패턴은 5개 층 중 5개에서 가장 비싼 대체물입니다.'
    assert p2.blend_table({"loss": 1.106, "entropy": 1.0}, (0.5,), {0.0: [1.378]}, lang='ko') == ('기본값: 문장에서 손실 1.106 nats, 패턴 엔트로피 1.000 nats. 마지막 층, 검증 배치 하나에서 V₁ 가중치(행)와 온도(열)에 따른 손실(nats):', '| V₁ 가중치 | T = 0.5 |\n|:---|---:|\n| 0.0 | 1.378 |')
    assert p2.answer(1.152, 1.464, 0.098, [1.42, 2.13], lang='ko') == '이 모델의 깊은 층은 새로 계산한 QK 패턴에 실제로 의존하지만, 첫 층보다는 덜 의존합니다: 패턴을 균등한 패턴으로 바꾸면 깊은 층에서는 평균적으로 원래 손실의 9.8 %의 비용이 들고, 층 0에서는 1.15 nats(79 %)가 듭니다. 층이 무엇을 옮기는지가 어디를 보는지보다 중요합니다: 값을 다른 텍스트의 값과 바꾸면 패턴을 바꿀 때의 1.42~2.13배 비용이 들며, 2개 층 중 2개에서 그렇습니다. 03장은 뒤쪽 층에 첫 층의 값을 주고, 07장은 이 실험들을 사전 학습된 모델에서 반복합니다.'
    assert p2.effect_tables([["0", "+0.810 ± 0.024", "+1.723 ± 0.038"]], [["0", "+1.152 ± 0.029", "—", "+0.434 ± 0.017"]], [4.5, 6.0], 1.464, 1.221, lang='ko') == ('| 층 | 패턴 교환 (nats) | 값 교환 (nats) |\n|:---|---:|---:|\n| 0 | +0.810 ± 0.024 | +1.723 ± 0.038 |', '| 층 | 균등 (nats) | 이전 층 | 배치 평균 |\n|:---|---:|---:|---:|\n| 0 | +1.152 ± 0.029 | — | +0.434 ± 0.017 |', '두 교환 사이의 차이는 적어도 표준 오차의 4.5배입니다(층 0; 오차는 독립인 것처럼 합쳤습니다). 배치 4개는 평균적인 텍스트보다 어렵습니다: 그 원래 손실(1.464 nats)은 분할 전체에서 잰 체크포인트의 검증 손실(1.221)보다 높습니다.')
    assert p2.heads_table(16, (1, 0), 0.498, torch.tensor([[0.387]]), torch.tensor([[1.443]]), lang='ko') == ('위의 패턴은 첫 층과 마지막 층의 모든 헤드가 문장의 처음 16자에 대해 만든 것입니다(행: 읽는 위치, 열: 읽히는 위치). 가장 강한 이전 토큰 헤드는 층 1, 헤드 0이며, 가중치의 0.498을 이전 문자에 둡니다:', '| 층 | 헤드 0: 이전 / 엔트로피 |\n|:---|---:|\n| 0 | 0.387 / 1.443 |')
    assert p2.copying_sentence(0.01, 0.039, 3, "0.000, 0.010", lang='ko') == '복사 점수는 우연 수준(0.010) 근처에 머뭅니다: 가장 큰 값은 0.039(층 3)이고, 층 0의 점수는 0.000, 0.010입니다.'
    assert provenance({'command':'vrs-edu reproduce char-6x64','date':'2026-11-29T10','wall_time_s':792,'environment':{'threads':1},'seeds':[0]}, 'ko') == '2026-11-29에 `vrs-edu reproduce char-6x64` 명령으로 만들었습니다: 실행 시간 13.2분, torch 스레드 1개, 시드 [0]'


def test_the_english_of_chapters_00_to_02_is_the_chapters_own():
    from vrs_edu.chapters.ch00_orientation import prose as p0
    from vrs_edu.chapters.ch01_two_axes import prose as p1
    from vrs_edu.chapters.ch02_qk_routes_v_carries import prose as p2

    assert p0.environment_line("3.11.7", 1, lang="en") == "Python 3.11.7, 1 torch threads"
    assert p1.rebuilt_line(1e-6, 1e-5, 18.4, lang="en") == (
        "largest |h_L - (embedding + sum of block outputs)|: below 1e-05  (entries of h_L are up to 18.4)")
    assert p1.component_label("embed", lang="en") == "embed"
    assert p2.model_line(6, 4, 1.221, lang="en") == "6 layers × 4 heads; validation loss 1.221 nats"
    # the number of training steps and of seeds are the run's, not written into the sentence
    assert "after 60 steps (validation loss 1.95 nats)" in p0.training_sentence(
        [0.16, 0.2, 0.24], [0.32, 4.0, 8.38], 1.95, [2, 1], 60, lang="en")
    assert p0.seeds_table([0, 1], [[0.16, 0.24], [0.15, 0.22]], [1, 1], 60, lang="en")[1] == (
        "Untrained, the stream grows at 1 of 1 blocks in each of the 2 seeds. The trained numbers come from one run "
        "of 60 steps: chapter 03 shows how runs of several seeds are compared.")
    assert p0.answer([0.16, 0.2, 0.24], [0.32, 4.0, 8.38], 2, 60, lang="en") == (
        "A token's residual stream is a running sum: the embedding plus what every block adds. In this 2-layer model "
        "its norm grows from 0.32 at the embedding to 8.38 after the last block (after 60 steps of training; 0.24 "
        "untrained), growing at 2 of 2 blocks. Chapter 01 asks whether that sum is *mere* accumulation.")
    assert p1.live_lens_table([3.78, 2.357], [4.58, 1.464], 2.357, 40, lang="en")[0].splitlines()[0] == (
        "| depth | lens loss, 40 steps | lens loss, checkpoint |")


def test_every_chapter_has_a_korean_title_and_question():
    from vrs_edu.chapters.ch00_orientation.prose import CHAPTERS_KO
    from vrs_edu.course.book import chapters

    assert sorted(CHAPTERS_KO) == sorted(c.number for c in chapters())


def test_chapter_00_quotes_the_endings_its_editions_checker_prints():
    """The orientation tells a learner how a checker's line ends: each edition quotes its own checker's words (the
    Korean one quoted the English endings, which a Korean learner never sees)."""
    root = Path(__file__).resolve().parents[1]
    for path, lang in ((root / "notebooks" / "00_orientation.ipynb", "en"),
                       (root / "notebooks" / "ko" / "00_orientation.ipynb", "ko")):
        markdown = " ".join(" ".join(c.source.split()) for c in nbformat.read(path, 4).cells
                            if c.cell_type == "markdown")
        for key in ("passed", "passed_ungraded"):
            ending = MESSAGES[lang][key].split(" — ")[-1]   # "hidden checks run when graded"; "public checks passed"
            assert f'"{ending}"' in markdown, (path.name, ending)
