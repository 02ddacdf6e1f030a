"""Chapter 02's figures and widgets in the Korean edition: every title, axis label, legend, colour-bar label and word
tick label in Korean, drawn with every glyph (no empty box, neither in plain text nor in a label that mixes Hangul
with mathtext, which matplotlib reports only in its log) and without a findfont complaint; the widgets' labels and
the toggle's buttons in Korean, their values the same. The English stays as it was (tests/test_widgets_ch01_02.py,
tests/test_figure_style.py)."""
from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import test_korean_font as font  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries import figures as F, prose as P, readout as R  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import Effect  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.viz.controls import change_from_default  # noqa: E402
from vrs_edu.viz.plots import HANGUL, KOREAN_FONT, MATH, small_text  # noqa: E402

style = font.style            # the course style of one edition (a fixture), from the Korean font's tests

TOKENS = list("Keys and values ")
# English words that must not be left in a Korean figure (mathtext removed first: its symbols are the same).
ENGLISH = ["layer", "head", "query", "key", "source", "weight", "norm", "loss", "attention", "swap", "uniform",
           "previous", "batch", "temperature", "default", "setting", "circuit", "token", "logit", "mean", "write",
           "share", "character", "differ"]


@pytest.fixture
def tiny():
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=3, n_heads=2, block_size=16)).eval()
    g = torch.Generator().manual_seed(0)
    seq = torch.randint(13, (2, 17), generator=g)
    yield model, seq[:, :-1], seq[:, 1:]
    plt.close("all")


def _effects(L: int = 3) -> dict:
    return {"clean": 2.0, "layers": list(range(L)),
            "pattern swap": [Effect(0.1 * l, 0.01, 8) for l in range(L)],
            "value swap": [Effect(0.2 * l, 0.01, 8) for l in range(L)],
            "uniform": [Effect(0.1, 0.01, 8)] * L, "previous layer": [None] + [Effect(0.2, 0.01, 8)] * (L - 1),
            "batch mean": [Effect(0.05, 0.01, 8)] * L}


def _texts(fig) -> list[str]:
    fig.canvas.draw()                           # tick labels exist once drawn
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _korean_figures(model, x, y):
    rng = np.random.default_rng(0)
    views = R.attention_views(model, x)
    n = len(TOKENS)
    return {
        "plot_patterns": lambda: F.plot_patterns({0: rng.uniform(size=(2, n, n)), 2: rng.uniform(size=(2, n, n))},
                                                 TOKENS, lang="ko"),
        "plot_head_writes": lambda: F.plot_head_writes(rng.uniform(size=(3, 2)), lang="ko"),
        "plot_layer_effects swap": lambda: F.plot_layer_effects(_effects(), ["pattern swap", "value swap"],
                                                                P.swap_title("ko"), lang="ko"),
        "plot_layer_effects frozen": lambda: F.plot_layer_effects(
            _effects(), ["uniform", "previous layer", "batch mean"], P.frozen_title("ko"), lang="ko"),
        "plot_circuits": lambda: F.plot_circuits(rng.normal(size=(6, 6)), rng.normal(size=(6, 6)), TOKENS[:6],
                                                 P.head_label(0, 1, "ko"), lang="ko"),
        "plot_weight_vs_norm": lambda: F.plot_weight_vs_norm(views["weight"][1, 0, 1], views["norm"][1, 0, 1],
                                                             TOKENS, 1, 1, lang="ko"),
        "norm_view_figure weight": lambda: F.norm_view_figure(views, 1, 1, "weight", TOKENS, lang="ko")[0],
        "norm_view_figure norm": lambda: F.norm_view_figure(views, 1, 1, "norm", TOKENS, lang="ko")[0],
        "blend_figure": lambda: F.blend_figure(model, x, y, layer=2, weight=0.5, temperature=2.0, head=1,
                                               tokens=TOKENS, lang="ko")[0],
    }


# What each Korean figure must say (substrings of its texts, mathtext as written).
LABELS_KO = {
    "plot_patterns": ["층 0, 헤드 0", "층 2, 헤드 1", "키 (읽히는 위치)", "쿼리 (읽는 위치)", "어텐션 가중치"],
    "plot_head_writes": ["평균 ‖각 헤드가 쓰는 것‖", "평균 ‖쓰기‖", "헤드", "층"],
    "plot_layer_effects swap": ["한 층의 한쪽 절반을 다른 입력의 것으로 교환", "패턴 교환", "값 교환", "층 0", "층 2",
                                "Δ 손실 (nats)"],
    "plot_layer_effects frozen": ["한 층의 경로를 고정", "균등", "이전 층", "배치 평균", "층 1"],
    "plot_circuits": ["층 0, 헤드 1", "QK 회로 (행 평균을 뺌): 토큰이 어텐션하는 곳", "OV 회로: 헤드가 쓰는 것", "키 토큰",
                      "쿼리 토큰", "출력 토큰 (올라가는 로짓)", "어텐션받는 토큰", "점수 − 행 평균", "올라가는 로짓"],
    "plot_weight_vs_norm": ["층 1, 헤드 1: 가중치 α", "층 1, 헤드 1: 노름 ‖α f(x)‖", "쿼리 i (읽는 문자)",
                            "소스 j (읽히는 문자)", "쿼리 행에서 차지하는 몫"],
    "norm_view_figure weight": ["층 1, 헤드 1: 가중치 $\\alpha_{ij}$ (QK)", "이 헤드의 가중치 지도와 노름 지도의 차이: ",
                                "(0: 같은 지도, 1: 공통된 소스가 없음)", "소스 j", "각 소스가 가중치 1일 때 쓰는 것"],
    "norm_view_figure norm": ["층 1, 헤드 1: 노름 $\\Vert\\alpha_{ij}\\,f(x_j)\\Vert$ (QK, V, O)"],
    "blend_figure": ["층 2 헤드 1, w(V_1) 0.50, 온도 2.00: 손실 ", "\n패턴 엔트로피 ", "nats (기본값 ", "키 위치 (읽히는 문자)",
                     "쿼리 위치 (읽는 문자)", "온도 2.00", "기본값 (w 0, 온도 1)", "이 설정",
                     "w(V_1): 층 2의 값에서 V_1의 가중치", "문장에서의 손실 (nats)", "손실 "],
}


def test_every_korean_figure_of_the_chapter_is_checked(tiny):
    assert set(LABELS_KO) == set(_korean_figures(*tiny))


@pytest.mark.parametrize("name", list(LABELS_KO))
def test_the_korean_figure_says_its_labels_with_every_glyph(name, tiny, style, caplog):
    style("ko")
    with caplog.at_level(logging.DEBUG, logger="matplotlib"):
        fig = _korean_figures(*tiny)[name]()
        font._draw_strictly(fig)           # "Glyph ... missing from font(s)" is a warning: an error here
    complaints = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
                  or "findfont: Failed" in r.getMessage()]
    assert not complaints, f"{name}: {complaints}"   # mathtext's missing glyphs and findfont's weights are logged
    texts = _texts(fig)
    joined = " | ".join(texts)
    missing = [label for label in LABELS_KO[name] if label not in joined]
    assert not missing, f"{name} lacks {missing}; it says: {joined}"
    english = [w for w in ENGLISH if w in MATH.sub("", joined).lower()]
    assert not english, f"{name} still says {english} in Korean: {joined}"
    mixed = [t for t in fig.findobj(Text) if HANGUL.search(t.get_text()) and MATH.search(t.get_text())]
    assert all(t.get_fontfamily() == [KOREAN_FONT] for t in mixed)      # Hangul beside mathtext: NanumGothic
    assert small_text(fig) == []


def test_the_english_figures_keep_their_words(tiny, style):
    style("en")
    model, x, y = tiny
    fig = F.plot_layer_effects(_effects(), ["pattern swap", "value swap"], P.swap_title("en"), lang="en")
    ax = fig.axes[0]
    assert ax.get_title() == "swap one half of one layer with another input's"
    assert ax.get_ylabel() == "Δ loss (nats)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["pattern swap", "value swap"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["layer 0", "layer 1", "layer 2"]
    fig = F.plot_head_writes(np.ones((3, 2)), lang="en")
    assert (fig.axes[0].get_title(), fig.axes[0].get_xlabel()) == ("mean ‖what each head writes‖", "head")
    fig, _ = F.norm_view_figure(R.attention_views(model, x), 1, 1, "norm", TOKENS, lang="en")
    assert fig.axes[0].get_title() == "layer 1, head 1: norm $\\Vert\\alpha_{ij}\\,f(x_j)\\Vert$ (QK, V, O)"
    assert fig._suptitle.get_text().startswith("the head's weight map and norm map differ by ")
    fig, r = F.blend_figure(model, x, y, layer=2, tokens=TOKENS, lang="en")
    assert fig.axes[1].get_title() == f"loss {r['loss']:.3f} nats (the default)"
    assert not [t for t in _texts(fig) if HANGUL.search(t)]


def test_the_korean_blend_titles_state_the_change_from_the_default(tiny, style):
    style("ko")
    model, x, y = tiny
    fig, r = F.blend_figure(model, x, y, layer=2, weight=1.0, tokens=TOKENS, lang="ko")
    d = r["default_loss"]
    assert fig.axes[1].get_title() == f"손실 {r['loss']:.3f} nats (기본값 {d:.3f}에서 {r['loss'] - d:+.3f})"
    fig, r = F.blend_figure(model, x, y, layer=2, tokens=TOKENS, lang="ko")
    assert fig.axes[1].get_title() == f"손실 {r['loss']:.3f} nats (기본값)"


def test_the_chapters_figure_words_in_both_languages():
    assert P.condition_label("pattern swap", "ko") == "패턴 교환"
    assert P.condition_label("batch mean", "ko") == "배치 평균"
    assert P.condition_label("batch mean", "en") == "batch mean"
    assert P.head_label(0, 3, "ko") == "층 0, 헤드 3"
    assert P.head_label(0, 3, "en") == "layer 0, head 3"
    assert P.swap_title("en") == "swap one half of one layer with another input's"
    assert P.swap_title("ko") == "한 층의 한쪽 절반을 다른 입력의 것으로 교환"
    assert (P.frozen_title("en"), P.frozen_title("ko")) == ("freeze one layer's routing", "한 층의 경로를 고정")
    assert change_from_default(1.115, 1.106, ".3f", " nats", "ko") == "1.115 nats (기본값 1.106에서 +0.009)"
    assert change_from_default(0.5, 0.75, ".2f", lang="ko") == "0.50 (기본값 0.75에서 -0.25)"
    assert change_from_default(1.106, 1.106, lang="ko") == "1.106 (기본값)"
    assert change_from_default(1.115, 1.106) == "1.115 (+0.009 from the default 1.106)"   # the running edition: en
    with pytest.raises(ValueError, match="lang"):
        P.head_label(0, 0, "fr")


def test_the_korean_widgets_label_their_controls_and_keep_their_values(tiny, style):
    from test_widget_callbacks import drive

    style("ko")
    model, x, y = tiny
    w = F.norm_view_widget(model, x, tokens=TOKENS, layer=2, head=1, lang="ko")
    assert [c.description for c in w.children[:3]] == ["층", "헤드", "읽는 방식"]
    view = w.children[2]
    assert view._options_labels == ("가중치", "노름") and [v for _, v in view.options] == ["weight", "norm"]
    assert w.kwargs == {"layer": 2, "head": 1, "view": "weight"}
    assert drive(F.norm_view_widget(model, x, tokens=TOKENS, lang="ko")) == {"층": 4, "헤드": 4, "읽는 방식": 4}
    w = F.blend_widget(model, x, y, layer=2, head=1, lang="ko")
    assert [c.description for c in w.children[:3]] == ["w(V_1)", "온도", "헤드"]
    assert w.kwargs == {"weight": 0.0, "temperature": 1.0, "head": 1}
    w = F.norm_view_widget(model, x, tokens=TOKENS, lang="en")
    assert [c.description for c in w.children[:3]] == ["layer", "head", "read by"]
    assert list(w.children[2].options) == ["weight", "norm"]
    assert [c.description for c in F.blend_widget(model, x, y, layer=2, lang="en").children[:3]] == \
        ["w(V_1)", "temperature", "head"]
