"""Chapter 09's for-and-against figure: one row per question, two lanes (for, against) on a linear axis that holds
both marks and 0, every text at the course's minimum size, a hollow mark for a number that does not decide its
side, "nothing measured" for an empty side, and a clear error for rows out of order."""
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


def test_four_rows_linear_axes_readable_text_and_both_marks_in_view():
    apply_course_style()
    rows = _rows()
    fig = plot_for_against(rows)
    axes = fig.axes
    assert len(axes) == 4 and not small_text(fig)
    assert all(ax.get_xscale() == "linear" and ax.get_xlabel() == "loss change (nats)" for ax in axes)
    for r, ax in zip(rows, axes):
        lo, hi = ax.get_xlim()
        marks = [r[w].mean for w in ("for", "against") if r[w] is not None]
        assert lo < min([0.0, *marks]) and max([0.0, *marks]) < hi       # 0 and every mark in view
        assert ax.get_title(loc="left").startswith(f"Q{r['n']} · ")
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["for: number 0.5", "against: number 1.2"]
    assert "against: nothing measured" in [t.get_text() for t in axes[2].get_yticklabels()]
    assert "+5.90" in [t.get_text() for t in axes[1].texts] and "-0.030" in [t.get_text() for t in axes[1].texts]
    plt.close(fig)


def test_a_mark_that_does_not_decide_its_side_is_hollow():
    fig = plot_for_against(_rows())
    faces = [line.get_markerfacecolor() for line in fig.axes[3].lines if line.get_marker() in ("o", "s")]
    assert faces and all(f == "white" for f in faces)                  # both of Q4's numbers are undecided
    filled = [line.get_markerfacecolor() for line in fig.axes[0].lines if line.get_marker() in ("o", "s")]
    assert filled and "white" not in filled
    plt.close(fig)


def test_rows_out_of_order_are_refused():
    with pytest.raises(ValueError, match="four questions in order"):
        plot_for_against(_rows()[::-1])
