"""The Korean edition's figures draw every Hangul glyph: NanumGothic (from the PyPI package koreanize-matplotlib,
installed by `make setup`) is registered by the Korean course style as DejaVu Sans's fallback, while the English
style stays matplotlib's default. matplotlib only warns ("Glyph NNNN ... missing from font(s)") where it draws an
empty box, so these tests turn warnings into errors."""
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from vrs_edu.viz import schematics as S  # noqa: E402
from vrs_edu.viz.plots import (KOREAN_FONT, apply_course_style, korean_font_file,  # noqa: E402
                               register_korean_font)

HANGUL = "깊이 축의 잔차 스트림: 값(V)은 내용, QK는 기준"


@pytest.fixture
def style():
    """Apply the course style of one edition inside an rc_context; every figure closed afterwards."""
    with plt.rc_context():
        yield apply_course_style
    plt.close("all")


def _draw_strictly(fig):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()


def test_the_font_file_comes_from_the_installed_package_without_importing_it():
    import sys

    assert korean_font_file().name == "NanumGothic.ttf" and korean_font_file().is_file()
    assert "koreanize_matplotlib" not in sys.modules      # its import would restyle every figure


def test_a_korean_figure_has_no_missing_glyph(style):
    style("ko")
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [3.1, 2.9, 2.7], label="손실 (nats) −0.032 ≈ 2×")
    ax.set_title(HANGUL)
    ax.set_xlabel("층 $l$")
    ax.set_ylabel("검증 손실")
    ax.legend(title="모델")
    _draw_strictly(fig)
    assert plt.rcParams["font.family"][-1] == KOREAN_FONT


def test_the_english_style_is_unchanged_and_the_check_would_catch_a_missing_glyph(style):
    style("en")
    assert KOREAN_FONT not in plt.rcParams["font.family"]
    fig, ax = plt.subplots()
    ax.set_title("Residual stream along depth")
    _draw_strictly(fig)                                   # English text: every glyph in DejaVu Sans
    ax.set_title(HANGUL)
    with pytest.raises(UserWarning, match="missing from font"):
        _draw_strictly(fig)
    register_korean_font()                                # registered or not, English figures do not use it
    assert font_manager.findfont(KOREAN_FONT, fallback_to_default=False).endswith("NanumGothic.ttf")
    assert KOREAN_FONT not in plt.rcParams["font.family"]


def test_a_real_course_figure_renders_in_korean(style):
    style("ko")
    fig = S.residual_stream()
    fig.axes[0].set_title("잔차 스트림: 각 블록이 상태를 읽고 쓴 것을 더합니다")
    fig.axes[0].text(0.5, 0.05, "임베딩 + 블록별 출력", transform=fig.axes[0].transAxes)
    _draw_strictly(fig)


def test_a_bold_korean_title_finds_the_bold_face_without_a_warning(style, caplog):
    """A bold title in NanumGothic logged "findfont: Failed to find font weight bold for NanumGothic" (stderr in the
    Korean notebooks) while only the regular face was registered; the bold face of the same package is now."""
    style("ko")
    fig, ax = plt.subplots()
    ax.set_title(HANGUL, fontweight="bold")
    fig.suptitle("굵은 제목", fontweight="bold")
    with caplog.at_level("DEBUG", logger="matplotlib.font_manager"):
        _draw_strictly(fig)
    assert not [r for r in caplog.records if "Failed to find font weight" in r.getMessage()]
    bold = font_manager.FontProperties(family="NanumGothic", weight="bold")
    assert font_manager.findfont(bold, fallback_to_default=False).endswith("NanumGothicBold.ttf")
