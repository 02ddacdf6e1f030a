"""Chapter 09's for-and-against figure: one row per question, a panel per side, each number on its own linear axis
that holds its interval and 0, the side of the axis that speaks for the conclusion shaded, every text at the course's
minimum size, a hollow mark for a number that does not decide its side, "nothing measured" for an empty side, and a
clear error for rows out of order."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.chapters.ch09_the_four_answers.argument import Evidence  # noqa: E402
from vrs_edu.chapters.ch09_the_four_answers.figures import plot_for_against  # noqa: E402
from vrs_edu.viz.plots import apply_course_style, small_text  # noqa: E402


def _e(n, mean, verdict="reproduced", favours="positive"):
    return Evidence(n, f"number {mean}", "s", "costs {amount}", "saves {amount}", mean, mean - 0.01, mean + 0.01,
                    verdict, favours, "m", "c", "r", "w", "01")


def _rows():
    return [{"n": 1, "for": _e(1, 0.5), "against": _e(1, 1.2, favours="cheap")},
            {"n": 2, "for": _e(2, -0.03, favours="negative"), "against": _e(2, 5.9, favours="cheap")},
            {"n": 3, "for": _e(3, -0.1, favours="negative"), "against": None},
            {"n": 4, "for": _e(4, -0.01, "undecided", "negative"), "against": _e(4, 0.01, "undecided", "negative")}]


def test_a_panel_per_number_on_its_own_linear_axis_with_the_for_side_shaded():
    apply_course_style()
    rows = _rows()
    fig = plot_for_against(rows)
    axes = [fig.axes[2 * i: 2 * i + 2] for i in range(4)]
    assert len(fig.axes) == 8 and not small_text(fig)
    for r, pair in zip(rows, axes):
        for ax, which in zip(pair, ("for", "against")):
            e = r[which]
            texts = [t.get_text() for t in ax.texts]
            if e is None:
                assert texts == ["nothing measured"]
                continue
            lo, hi = ax.get_xlim()
            assert ax.get_xscale() == "linear" and lo < min(0.0, e.lo) and max(0.0, e.hi) < hi
            assert ax.get_title(loc="left") == e.label
            (shade,) = ax.patches                                  # the stretch that speaks for the conclusion
            x0, x1 = shade.get_x(), shade.get_x() + shade.get_width()
            expected = {"positive": (0.0, hi), "negative": (lo, 0.0)}.get(e.favours, (lo, e.margin))
            assert (x0, x1) == pytest.approx(expected)
    # a -0.03 gain keeps a scale of its own beside a +5.9 cost: its panel spans less than a tenth of a nat
    lo, hi = axes[1][0].get_xlim()
    assert hi - lo < 0.1 and "-0.030" in [t.get_text() for t in axes[1][0].texts]
    assert "+5.90" in [t.get_text() for t in axes[1][1].texts]
    assert [ax.get_xlabel() for ax in axes[3]] == ["loss change (nats)"] * 2
    heads = [t.get_text() for t in fig.texts]
    assert [h[:5] for h in heads if h.startswith("Q")] == ["Q1 · ", "Q2 · ", "Q3 · ", "Q4 · "]
    assert "FOR the conclusion" in heads and "AGAINST it" in heads
    plt.close(fig)


def test_a_mark_that_does_not_decide_its_side_is_hollow():
    fig = plot_for_against(_rows())
    faces = [line.get_markerfacecolor() for ax in fig.axes[6:8] for line in ax.lines if line.get_marker() == "o"]
    assert len(faces) == 2 and all(f == "white" for f in faces)        # both of Q4's numbers are undecided
    filled = [line.get_markerfacecolor() for line in fig.axes[0].lines if line.get_marker() == "o"]
    assert filled and "white" not in filled
    plt.close(fig)


def test_rows_out_of_order_are_refused():
    with pytest.raises(ValueError, match="four questions in order"):
        plot_for_against(_rows()[::-1])


def test_the_figure_carries_its_own_key_for_filled_hollow_and_shaded():
    fig = plot_for_against(_rows())
    (legend,) = fig.legends
    words = [t.get_text() for t in legend.get_texts()]
    assert [w.split(":")[0] for w in words] == ["filled", "hollow", "shaded"]
    plt.close(fig)
