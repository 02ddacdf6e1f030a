"""The drawn schematics in the Korean edition (vrs_edu.viz.schematics with lang="ko"): every schematic labels its
drawing in Korean, draws every glyph (no empty box, neither in plain text nor in a label that mixes Hangul with
mathtext, which matplotlib reports only in its log), asks for no bold face NanumGothic lacks ("findfont: Failed to
find font weight bold"), and stays readable at phone width like the English drawing. The schematic brings its own
fonts: these tests draw under the English course style. ``lang=None`` follows the running notebook's edition."""
from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from test_korean_font import _draw_strictly  # noqa: E402
from vrs_edu.i18n.language import ENV_VAR  # noqa: E402
from vrs_edu.viz import schematics as S  # noqa: E402
from vrs_edu.viz.plots import HANGUL, MATH, overlapping_text, small_text  # noqa: E402

ALL = {**S.SCHEMATICS, "weight_times_norm": S.weight_times_norm}

# What each Korean schematic must say (substrings of its texts, mathtext included as written).
LABELS_KO = {
    "residual_stream": ["잔차 스트림: 누적 합", "임베딩", "블록 0", "블록 2", "로짓", r"\mathrm{block}_l(h_l)"],
    "attention_halves": ["QK는 경로를 정하고", "어디를 볼지", "옮겨지는 것", "패턴 교환:", "값 교환:",
                         "다른 텍스트의 $A$, 이 텍스트의 $v$"],
    "weight_times_norm": ["어텐션은 가중치만이 아닙니다", "가중치 $\\alpha$", "옮긴 양", "원천 1"],
    "value_residual": ["뒤쪽 층이 $V_1$을 다시 읽음", "1층이 $V_1$을 계산", "2층:", "ResFormer:", "($W_V$ 없음)"],
    "x0_into_qkv": ["q, k, v에 섞이는 x0", "스트림 $x_i$", "(문맥)", "(문맥 없음)", "발표된 결과", "04장이 검정"],
    "bank_of_values": ["값 뱅크: 표에서 가져오는 V", "토큰 id", "표 $E_v$", "$W_V$도 문맥도 없고"],
    "input_substitution": ["대체 절제: v가 x0을 읽음", "스트림 $h_l$", "문맥이 아니라 토큰을 봅니다"],
    "k_eq_v_and_xsa": ["두 절반에 대한 두 설계", "노름 $\\rightarrow v$", "$W_V$ 없음", "방향 성분을 뺍니다"],
    "token_tables": ["표에서 다시 가져오는 토큰", "값 임베딩", "층별 임베딩", "토큰 id", "스트림 $+"],
    "depth_mixer": ["깊이 방향 ShortSWA: K = 3", "깊이 ↑", "블록 4의", "시퀀스 방향 ShortSWA"],
    "hyper_connections": ["하이퍼 커넥션: 스트림 4개", "블록 $l$", "읽기: 혼합 하나 (pre)", "쓰기: 스트림마다 (post)",
                          "행과 열의 합이 1"],
    "kv_cache": ["토큰당 KV 캐시", "기준선", "값 뱅크", "층", "유지 안 함"],
    "shared_kv": ["두 층이 함께 쓰는 캐시", "기준선", "CLA ×2", "왼쪽 층의 것을 읽음"],
    "decoder_substitution": ["대체: 토큰별 표에서 읽는 v", "스트림 $h_l$", "토큰 id", "표$_v$[id]", "그대로"],
}
ENGLISH_ONLY = ["The residual stream", "where to look", "what gets moved", "pattern swap", "value swap", "published",
                "token id", "stream", "embedding", "block", "layer", "kept", "moved", "source", "context"]

pytestmark = pytest.mark.usefixtures("course_style")   # tests/conftest.py: the English course style


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def test_every_schematic_has_korean_labels_checked():
    assert set(LABELS_KO) == set(ALL)


@pytest.mark.parametrize("name", list(ALL))
def test_the_korean_schematic_draws_its_korean_labels_with_every_glyph(name, caplog):
    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        fig = ALL[name](lang="ko")
        _draw_strictly(fig)                   # "Glyph ... missing from font(s)" is a warning: an error here
    complaints = [r.getMessage() for r in caplog.records if r.name.startswith("matplotlib")]
    assert not complaints, f"{name}: {complaints}"     # mathtext's missing glyphs and findfont's weights are logged
    texts = " | ".join(_texts(fig))
    missing = [label for label in LABELS_KO[name] if label not in texts]
    assert not missing, f"{name} lacks {missing}; it says: {texts}"
    english = [word for word in ENGLISH_ONLY if word in MATH.sub("", texts)]
    assert not english, f"{name} still says {english} in Korean: {texts}"
    assert not [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_weight() not in ("normal", 400)]
    assert fig.get_size_inches()[0] <= S.PHONE_WIDTH_IN
    assert small_text(fig) == []
    assert overlapping_text(fig) == []


@pytest.mark.parametrize("name", list(ALL))
def test_the_english_drawing_is_the_default_and_has_no_hangul(name, monkeypatch):
    monkeypatch.setenv(ENV_VAR, "en")
    assert _texts(ALL[name]()) == _texts(ALL[name](lang="en"))
    assert not [t for t in _texts(ALL[name]()) if HANGUL.search(t)]


def test_lang_none_follows_the_running_notebooks_edition(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "ko")
    assert "잔차 스트림: 누적 합" in _texts(S.residual_stream())
    assert "패턴 교환:" in _texts(S.attention_halves())


def test_a_korean_schematic_leaves_the_current_style_as_it_was():
    import matplotlib.pyplot as plt

    before = list(plt.rcParams["font.family"])
    S.bank_of_values(lang="ko")
    assert list(plt.rcParams["font.family"]) == before
    with pytest.raises(ValueError, match="lang: expected one of en, ko, got 'fr'"):
        S.kv_cache(lang="fr")


def test_the_log_check_would_catch_hangul_in_mathtext_drawn_with_dejavu_sans(caplog):
    import matplotlib.pyplot as plt

    fig = plt.figure()
    fig.text(0.1, 0.5, "토큰 $x_0$", fontfamily="DejaVu Sans")
    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        fig.canvas.draw()
    assert any("does not have a glyph" in r.getMessage() for r in caplog.records)


def test_the_value_residual_particles_follow_each_layer_number():
    """A₂가 V₂를 (이), A₃이 V₃을 (삼), A₄가 V₄를 (사), A₅가 V₅를 (오): the particle follows the subscript as read."""
    texts = _texts(S.value_residual(n_layers=5, lang="ko"))
    for n, (subject, obj) in {2: ("가", "를"), 3: ("이", "을"), 4: ("가", "를"), 5: ("가", "를")}.items():
        assert f"{n}층:  $A_{n}${subject} $V_{n}${obj} 옮김" in texts, (n, texts)
    assert "1층이 $V_1$을 계산" in texts
    matplotlib.pyplot.close("all")
