"""Chapter 07's widget logic (without a browser) and its exercise checkers."""
import ipywidgets as W
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.course.checks import PASSED, PASSED_UNGRADED  # noqa: E402
from vrs_edu.course.exercises import ch07  # noqa: E402
from vrs_edu.chapters.ch07_real_model import probes as P  # noqa: E402
from vrs_edu.chapters.ch07_real_model import model as R  # noqa: E402
from vrs_edu.nn.bert import sentence_embedding  # noqa: E402
from vrs_edu.chapters.ch07_real_model import figures as V  # noqa: E402


@pytest.fixture(scope="module")
def fitted(real):
    sentences = R.corpus_sentences(30, real=real)
    table = P.probe_table(P.collect_activations(real, sentences))
    held_out = [s for i, s in enumerate(sentences) if i % 5 == 4]
    return table, held_out


def test_identity_scores_one_per_token_and_path(real, fitted):
    table, held_out = fitted
    s = held_out[0]
    tokens, scores = P.token_identity_scores(real, table["probes"], s, layer=2)
    assert tokens == real.tokens(s)[1:-1]                     # [CLS] and [SEP] are left out
    assert set(scores) == {"q", "k", "v"}
    assert all(len(v) == len(tokens) and max(v) <= 1 for v in scores.values())


def test_identity_scores_agree_with_the_probe_by_hand(real, fitted):
    table, held_out = fitted
    s = held_out[1]
    tokens, scores = P.token_identity_scores(real, table["probes"], s, layer=4)
    tr = real.run([s], trace=True).trace
    v = tr["blocks.4.attn.v"][0].transpose(0, 1).flatten(1)[1:-1]            # (T-2, D), heads concatenated
    x = tr["embed.token"][0, 1:-1]
    p = table["probes"]["v.4"]
    by_hand = 1 - (v - p.predict(x)).pow(2).sum(-1) / (v - p.y_mean.float()).pow(2).sum(-1)
    assert torch.allclose(torch.tensor(scores["v"]).float(), by_hand, atol=1e-4)


def test_identity_scores_reject_bad_layer_and_missing_probes(real, fitted):
    table, held_out = fitted
    with pytest.raises(ValueError, match="layer must be in 0..5"):
        P.token_identity_scores(real, table["probes"], held_out[0], layer=6)
    with pytest.raises(ValueError, match="no probes for"):
        P.token_identity_scores(real, {}, held_out[0], layer=0)


def test_identity_figure_draws_one_bar_per_token_and_path(real, fitted):
    table, held_out = fitted
    fig, tokens, scores = V.identity_figure(real, table["probes"], held_out[0], layer=3)
    ax = fig.axes[0]
    assert len(ax.patches) == 3 * len(tokens)
    low, high = ax.get_ylim()
    assert low <= min(min(v) for v in scores.values()) and high >= 1.0   # nothing drawn outside the axes
    assert "v best explained in" in P.identity_summary(scores)
    plt.close(fig)


def test_probe_table_figure_has_q_k_v_and_stream(fitted):
    table, _ = fitted
    fig = V.plot_probe_table(table)
    assert [l.get_label() for l in fig.axes[0].get_lines()] == ["q", "k", "v", "stream (layer input)"]
    plt.close(fig)


def test_widget_is_an_interactive_with_sentence_and_layer(real, fitted):
    table, held_out = fitted
    w = V.identity_widget(real, table["probes"], held_out)
    assert isinstance(w, W.interactive)
    kinds = [type(c).__name__ for c in w.children]
    assert kinds[:2] == ["Dropdown", "IntSlider"] and w.children[1].max == 5
    with pytest.raises(ValueError, match="layer must be in"):
        V.identity_widget(real, table["probes"], held_out, layer=9)
    with pytest.raises(ValueError, match="sentences is empty"):
        V.identity_widget(real, table["probes"], [])


# --- exercises -------------------------------------------------------------------------------------------------

def test_reference_solutions_pass(capsys):
    assert ch07.check_sentence_embedding(sentence_embedding)
    assert ch07.check_held_out_r2(P.r2_score)
    out = capsys.readouterr().out   # chapter 07 has no assignment: no hidden checks are promised
    assert out.count(PASSED_UNGRADED) == 2 and PASSED not in out


def test_graders_seeds_give_other_cases():
    assert ch07.check_sentence_embedding(sentence_embedding, seed=3, quiet=True)
    assert ch07.check_held_out_r2(P.r2_score, seed=3, quiet=True)


@pytest.mark.parametrize("wrong, hint", [
    (lambda h, m: torch.nn.functional.normalize(h.mean(1), dim=-1), "padding tokens must not count"),
    (lambda h, m: (h * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True), "Normalize module"),
    (lambda h, m: (torch.nn.functional.normalize(h, dim=-1) * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True),
     "normalised each token before averaging"),
])
def test_sentence_embedding_mistakes_get_their_hint(wrong, hint, capsys):
    assert not ch07.check_sentence_embedding(wrong)
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", [
    (lambda y, yh, b: float((1 - (y - yh).pow(2).sum(0) / (y - b).pow(2).sum(0)).mean()), "one R² per dimension"),
    (lambda y, yh, b: float(1 - (y - yh).pow(2).sum() / (y - y.mean(0)).pow(2).sum()), "use the given baseline"),
    (lambda y, yh, b: float((y - yh).pow(2).sum() / (y - b).pow(2).sum()), "R² is 1 minus it"),
    (lambda y, yh, b: float(1 - (y - yh).abs().sum() / (y - b).abs().sum()), "squared errors"),
])
def test_r2_mistakes_get_their_hint(wrong, hint, capsys):
    assert not ch07.check_held_out_r2(wrong)
    assert hint in capsys.readouterr().out
