"""Chapter 09's effect figure: one panel per question, every text at the course's minimum size, a symlog scale only
where sizes differ widely, and a clear error for answers out of order."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.chapters.ch09_the_four_answers.figures import plot_four_answers  # noqa: E402
from vrs_edu.viz.plots import apply_course_style, small_text  # noqa: E402


def _answers():
    bar = lambda m, model: {"label": f"{model} {m}", "mean": m, "lo": m - 0.01, "hi": m + 0.01, "model": model}
    return [{"n": 1, "bars": [bar(0.1, "toy"), bar(0.5, "decoder")]}, {"n": 2, "bars": [bar(-0.016, "toy"),
                                                                                      bar(5.9, "decoder")]},
            {"n": 3, "bars": []}, {"n": 4, "bars": [bar(-0.03, "toy")]}]


def test_four_panels_readable_text_and_symlog_only_where_needed():
    apply_course_style()
    fig = plot_four_answers(_answers())
    axes = fig.axes
    assert len(axes) == 4 and not small_text(fig)
    assert axes[0].get_xscale() == "linear" and axes[1].get_xscale() == "symlog"
    assert "not measured yet" in [t.get_text() for t in axes[2].texts]
    plt.close(fig)


def test_answers_out_of_order_are_refused():
    with pytest.raises(ValueError, match="four questions in order"):
        plot_four_answers(_answers()[::-1])
