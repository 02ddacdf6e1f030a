"""Chapter 05's computed sentences choose their words from the numbers they state (known inputs, the words
expected by hand), its duality loop equals ShortSWA, and its x0-R² figure draws the premise line inside its axes."""
import re
from types import SimpleNamespace

import matplotlib
import pytest
import torch

from vrs_edu.chapters.ch05_depth_as_sequence.readout import equation_by_loop
from vrs_edu.lab.results import interval
from vrs_edu.nn.shortswa import short_swa
from vrs_edu.chapters.ch05_depth_as_sequence import prose as dp

matplotlib.use("Agg")


def row(name, mean, ci, verdict, family="ch05", reason=None):
    """A verdict row as the recipes' ``verdicts`` return it (only what the sentences read)."""
    return SimpleNamespace(test=SimpleNamespace(name=name, family=family), mean=mean, ci=ci, verdict=verdict,
                           reason=reason, interval=lambda: interval(mean, ci))


# The stored kjv run's shape: mudd and others win, every ShortSWA window is undecided above 0.
LOSS = [row("denseformer_loss", -0.089, (-0.132, -0.047), "reproduced"),
        row("mudd_loss", -0.098, (-0.146, -0.050), "reproduced"),
        row("shortswa-k2_loss", 0.010, (-0.010, 0.030), "undecided"),
        row("shortswa-full_loss", 0.007, (-0.001, 0.016), "undecided")]
CONTROLS = [row("mudd_beats_scalar_gain", -0.073, (-0.123, -0.023), "reproduced", "ch05_controls")]
DEPTH_ATTENTION = [row("depth_attention_loss", -0.023, (-0.040, -0.006), "reproduced"),
                   row("depth_attention_beats_attnres", 0.008, (-0.010, 0.026), "undecided")]
CHECK = row("attnres_qkv_no_worse", -0.007, (-0.048, 0.034), "undecided", "setup")


def description(name, mean, ci):
    """A description as :func:`vrs_edu.chapters.ch05_depth_as_sequence.recipe.descriptions` returns it: no test, no verdict."""
    return SimpleNamespace(name=name, mean=mean, ci=ci, why="not judged", interval=lambda: interval(mean, ci))


# The routers' V − Q and V − K margins (review 3, H4: DCA's V − Q −0.005, V − K −0.003), shown as descriptions.
ROUTERS = [description("dca_v_reads_x0_more_than_q", -0.005, (-0.015, 0.005)),
           description("dca_v_reads_x0_more_than_k", -0.003, (-0.010, 0.004)),
           description("mudd_v_reads_x0_more_than_q", 0.010, (0.002, 0.018)),
           description("mudd_v_reads_x0_more_than_k", -0.063, (-0.107, -0.019))]


def test_the_answer_says_partly_when_shortswa_over_depth_does_not_win():
    assert dp.answer_opening(LOSS) == "Partly"
    text = dp.answer_paragraph(LOSS, CONTROLS, DEPTH_ATTENTION, CHECK, ROUTERS, ["out of regime"], "a toy")
    assert text.startswith("**Partly**,") and "a toy" in text.split(". ")[0]      # the opening, then the regime
    assert "Yes" not in text
    # one set of reads, Depth-Attention counted with the mixers (the effect sentence's set): 2 mixers and
    # Depth-Attention of 4 mixers and Depth-Attention; the best is mudd (-0.098, not denseformer's -0.089)
    assert "3 of the 5 reads over depth, counting Depth-Attention," in text
    assert re.search(r"the most, mudd, lowers the loss by 0\.098 nats \(reproduced\)", text)
    assert "shortswa-k2 +0.010 nats (undecided)" in text and "shortswa-full +0.007 nats (undecided)" in text
    assert "Holm" not in text and "[" not in text and "by -" not in text         # no test jargon, no interval
    # the best read beats its scalar-gain control (reproduced): the win needs the read, not only a gain
    assert "the win needs the read over older layers" in text and "a learned gain alone" not in text
    undecided = [row("mudd_beats_scalar_gain", -0.01, (-0.03, 0.01), "undecided", "ch05_controls")]
    other = dp.answer_paragraph(LOSS, undecided, DEPTH_ATTENTION, CHECK, ROUTERS, ["out of regime"], "a toy")
    assert "against the scalar-gain control -0.010 nats (undecided): a learned gain alone may explain it" in other
    assert "the win needs the read" not in other
    # Depth-Attention's own change: its sign in words, its size unsigned; against Attention Residuals signed
    assert re.search(r"Depth-Attention\b[^;]*? lowers the loss by 0\.023 nats \(reproduced\)", text)
    assert "against Attention Residuals +0.008 nats (undecided)" in text


def test_the_answer_says_yes_only_when_a_shortswa_window_wins_and_not_shown_when_nothing_does():
    won = LOSS[:2] + [row("shortswa-k2_loss", -0.02, (-0.03, -0.01), "reproduced")]
    assert dp.answer_opening(won) == "Yes"
    nothing = [row("shortswa-k2_loss", 0.01, (-0.01, 0.03), "undecided")]
    assert dp.answer_opening(nothing) == "Not shown"
    da_undecided = [row("depth_attention_loss", -0.005, (-0.02, 0.01), "undecided"), DEPTH_ATTENTION[1]]
    text = dp.answer_paragraph(nothing, [], da_undecided, CHECK, ROUTERS, ["out of regime"], "a toy")
    assert "None of the 2 reads over depth, counting Depth-Attention, lowers the loss" in text


def test_a_loss_change_words_its_direction_from_the_sign():
    assert dp.loss_change(-0.023, (-0.04, -0.006), "reproduced").startswith("lowers the loss by 0.023 nats")
    assert dp.loss_change(0.012, (-0.004, 0.028), "undecided").startswith("raises the loss by 0.012 nats")
    assert "by -" not in dp.loss_change(-0.5, (-0.6, -0.4), "reproduced")


def test_the_effect_sentence_names_shortswa_over_depth_as_not_among_the_winners():
    effects = [{"name": r.test.name.removesuffix("_loss"), "mean": r.mean, "ci": r.ci, "verdict": r.verdict}
               for r in LOSS] + [{"name": "depth_attention", "mean": -0.023, "ci": (-0.040, -0.006),
                                  "verdict": "reproduced"},
                                 {"name": "attnres_qkv", "mean": -0.007, "ci": (-0.048, 0.034),
                                  "verdict": "check: undecided"}]
    text = dp.effect_sentence(effects)
    # the count: reproduced claims of all claims, Depth-Attention among them, the check (attnres_qkv) not counted
    assert text.startswith("3 of the 5 reads over depth") and "counting Depth-Attention" in text
    assert re.search(r"the most, mudd, lowers the loss by 0\.098 nats", text)        # the largest win, unsigned
    assert "Holm" not in text and "[" not in text and "attnres" not in text
    # every ShortSWA window undecided: not among the winners, each window's change signed with its verdict
    assert "is not among them" in text and "wins with" not in text
    assert "shortswa-k2 +0.010 nats, undecided; shortswa-full +0.007 nats, undecided" in text
    assert "None raises it" in text                       # no contradicted read
    won = [{**e, "verdict": "reproduced"} if e["name"] == "shortswa-k2" else e for e in effects]
    won += [{"name": "vertical", "mean": 0.02, "ci": (0.01, 0.03), "verdict": "contradicted"}]
    other = dp.effect_sentence(won)
    assert other.startswith("4 of the 6 reads over depth")
    assert "wins with shortswa-k2 (" in other and "is not among them" not in other
    assert "vertical raises the loss, decided" in other and "None raises" not in other
    with pytest.raises(ValueError, match="effects"):
        dp.effect_sentence(effects[-1:])


def test_the_premise_sentence_follows_its_number_against_the_one_threshold():
    fails, holds = dp.premise_sentence(0.935, 0.5), dp.premise_sentence(0.39, 0.5)
    assert "the premise **fails**" in fails and "**holds**" not in fails       # 0.935 is not below 0.5
    assert "the premise **holds**" in holds and "**fails**" not in holds       # 0.39 is
    assert "**fails**" in dp.premise_sentence(0.5, 0.5)                        # "below": the threshold itself fails
    assert "x0-R² below 0.5" in fails and "x0-R² below 0.45" in dp.premise_sentence(0.39, 0.45)   # the threshold, :g
    # the number as token identity (3 decimals) and its complement as context (a percentage, 1 decimal)
    assert "0.935 token identity, 6.5% context" in fails
    assert "0.390 token identity, 61.0% context" in holds


def test_the_router_sentence_reads_v_minus_q_and_v_minus_k_apart_and_says_why_descriptions_are_not_judged():
    s = dp.router_sentence(ROUTERS, 0.935, 0.5)
    # the counts of routers whose V − Q (mudd's +0.010) and V − K (none) lie above 0
    assert "than Q's in 1 of the 2 routers" in s and "than K's in 0 of the 2" in s
    flipped = [description(d.name, -d.mean, (-d.ci[1], -d.ci[0])) for d in ROUTERS]
    assert "than Q's in 1 of the 2 routers" in dp.router_sentence(flipped)       # dca's -0.005 becomes +0.005
    assert "than K's in 2 of the 2" in dp.router_sentence(flipped)
    # each router's V − Q and V − K apart, signed, with its interval, grouped by router
    assert "dca V − Q -0.005 [-0.015, +0.005], V − K -0.003 [-0.010, +0.004]" in s
    assert "mudd V − Q +0.010 [+0.002, +0.018], V − K -0.063 [-0.107, -0.019]" in s
    # descriptions: no verdict, why not judged, and the premise's number against its threshold when given
    assert "descriptions, not judged" in s and "Verdicts" not in s and "reproduced" not in s
    assert "fails on this model (here 0.935, above 0.5)" in s
    assert "(here" not in dp.router_sentence(ROUTERS) and "fails on this model" in dp.router_sentence(ROUTERS)
    assert "max(Q, K)" not in dp.router_sentence(ROUTERS)


def test_the_router_sentence_gives_each_judged_contrast_its_verdict_with_its_would_be_verdict():
    judged = [row("dca_v_reads_x0_more_than_q", 0.02, (0.01, 0.03), "reproduced", "primary"),
              row("dca_v_reads_x0_more_than_k", 0.001, (-0.002, 0.004), "negligible", "primary")]
    judged.append(SimpleNamespace(**{**vars(row("mudd_v_reads_x0_more_than_q", -0.1, (-0.2, -0.05),
                                                "out of regime", "primary")), "would_be": "contradicted"}))
    s = dp.router_sentence(judged)
    assert "descriptions" not in s and "Holm" not in s    # judged rows: their verdicts, not why they are not judged
    assert "dca V − Q reproduced" in s and "dca V − K negligible" in s
    assert "mudd V − Q out of regime (would be: contradicted)" in s
    with pytest.raises(ValueError, match="max"):
        dp.router_sentence([row("dca_v_reads_x0_more_than_qk", 0.0, (-1, 1), "undecided", "primary")])


def test_a_negligible_loss_change_is_neither_a_win_nor_a_loss():
    neg = dp.loss_change(-0.003, (-0.006, -0.001), "negligible")
    assert neg.startswith("lowers the loss by 0.003 nats") and neg.endswith("(negligible: too small to matter)")
    assert "too small" not in dp.loss_change(-0.003, (-0.006, -0.001), "reproduced")
    oor = SimpleNamespace(verdict="out of regime", would_be="reproduced", test=SimpleNamespace(margin=0.01))
    said = dp.loss_change(-0.02, (-0.03, -0.01), oor)
    assert said.startswith("lowers the loss by 0.020 nats") and "(out of regime (would be: reproduced))" in said
    effects = [{"name": "denseformer", "mean": -0.004, "ci": (-0.006, -0.002), "verdict": "negligible"},
               {"name": "mudd", "mean": -0.098, "ci": (-0.146, -0.050), "verdict": "reproduced"}]
    s = dp.effect_sentence(effects)
    assert s.startswith("1 of the 2 reads over depth")        # the negligible read is not counted as a win...
    assert "None raises it" in s                              # ... nor as a loss
    assert "the most, mudd," in s and "Depth-Attention" not in s   # no Depth-Attention among these reads
    assert re.search(r"denseformer changes it by less than the smallest effect declared before the run[^.]*: "
                     r"negligible, too small to matter", s)
    two = dp.effect_sentence(effects + [{"name": "dca", "mean": 0.001, "ci": (-0.001, 0.003),
                                         "verdict": "negligible"}])
    assert "denseformer and dca change it by less than" in two          # the verb agrees with the count


def test_the_equation_loop_equals_shortswa_over_depth_for_one_token():
    torch.manual_seed(0)
    h, w = torch.randn(6, 8), [torch.randn(4, 8) for _ in range(3)]
    for K in (1, 2, 6):
        assert torch.allclose(equation_by_loop(h, K, *w), short_swa(h[None], K, *w)[0], atol=1e-5)
    # layer 0 reads only itself: the softmax over one score is 1, so z^(0) is its own value
    assert torch.allclose(equation_by_loop(h, 2, *w)[0], w[2] @ h[0], atol=1e-6)
    with pytest.raises(ValueError, match="h: expected"):
        equation_by_loop(h[None], 2, *w)


def test_the_x0_r2_figure_draws_the_premise_line_inside_its_axes():
    from vrs_edu.chapters.ch05_depth_as_sequence.figures import plot_input_r2

    r2 = {"residual": {s: [1.0, 0.95, 0.93] for s in "qkv"},
          "dca": {"q": [1.0, 0.96, 0.94], "k": [1.0, 0.95, 0.92], "v": [1.0, 0.94, 0.91]}}
    fig = plot_input_r2(r2, ceiling=0.9)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert lo < 0.9 < hi
    assert any(list(line.get_ydata()) == [0.9, 0.9] for line in ax.get_lines())
    with pytest.raises(ValueError, match="baseline"):
        plot_input_r2({"dca": r2["dca"]})


def test_the_answer_names_the_stream_tests_would_be_verdict_and_the_routers_descriptions():
    text = dp.answer_paragraph(LOSS, CONTROLS, DEPTH_ATTENTION, CHECK, ROUTERS,
                               ["out of regime (would be: contradicted)"], "a toy")
    # why the per-stream question stays open: the stream test's verdict with its would-be verdict, the
    # instrument's "no worse" check signed with its verdict, the routers' margins not judged
    assert "its stream test out of regime (would be: contradicted);" in text        # one test: "test"
    assert "-0.007 nats from the baseline's, undecided as \"no worse\"" in text
    assert "margins are descriptions, not judged (their premise fails)" in text
    two = dp.answer_paragraph(LOSS, CONTROLS, DEPTH_ATTENTION, CHECK, ROUTERS, ["undecided", "out of regime"],
                              "a toy")
    assert "its stream tests out of regime and undecided;" in two                   # two: "tests", each verdict once
    judged = [row("dca_v_reads_x0_more_than_q", 0.02, (0.01, 0.03), "reproduced", "primary")]
    with_tests = dp.answer_paragraph(LOSS, CONTROLS, DEPTH_ATTENTION, CHECK, judged, ["undecided"], "a toy")
    assert "the routers' tests are reproduced" in with_tests and "descriptions, not judged" not in with_tests


def test_the_loss_figure_gives_a_negligible_read_its_own_colour():
    from matplotlib.colors import to_rgba

    from vrs_edu.chapters.ch05_depth_as_sequence.figures import plot_loss_effects

    fig = plot_loss_effects([{"name": "a", "mean": -0.002, "ci": (-0.004, -0.001), "verdict": "negligible"},
                             {"name": "b", "mean": -0.09, "ci": (-0.13, -0.05), "verdict": "reproduced"}])
    colours = [line.get_color() for line in fig.axes[0].lines if line.get_marker() == "o"]
    assert [to_rgba(c) for c in colours] == [to_rgba("tab:blue"), to_rgba("tab:green")]
    matplotlib.pyplot.close(fig)


def test_the_short_answer_states_the_opening_the_best_read_shortswa_s_range_and_the_stream_test():
    text = dp.short_answer(LOSS, DEPTH_ATTENTION[0], ["out of regime (would be: contradicted)"], "a toy")
    assert text.startswith("**Partly**, in this regime — a toy. ")
    # 2 mixers and Depth-Attention of 4 mixers and Depth-Attention; the best is mudd, its size unsigned
    assert "3 of the 5 reads over depth (Depth-Attention among them) lower the loss, decided" in text
    assert "the most, mudd, lowers the loss by 0.098 nats (reproduced)." in text
    assert "is not among them: its 2 windows change the loss by +0.007 to +0.010 nats (undecided)." in text
    assert "recent layers is described, not judged: its premise" in text
    assert "V preferring MLP outputs over attention outputs, is out of regime (would be: contradicted)." in text
    assert "[" not in text and "Holm" not in text
    won = LOSS[:2] + [row("shortswa-k2_loss", -0.02, (-0.03, -0.01), "reproduced")]
    other = dp.short_answer(won, DEPTH_ATTENTION[0], ["contradicted"], "a toy")
    assert other.startswith("**Yes**") and "is among them: its 1 window changes the loss by -0.020 nats" in other
    assert "attention outputs, is contradicted." in other
    none = dp.short_answer([row("shortswa-k2_loss", 0.01, (-0.01, 0.03), "undecided")],
                           row("depth_attention_loss", -0.005, (-0.02, 0.01), "undecided"), [], "a toy")
    assert "None of the 2 reads over depth (Depth-Attention among them) lowers the loss, decided." in none
    assert "attention outputs, is not run." in none
    with pytest.raises(ValueError, match="loss_rows"):
        dp.short_answer([], DEPTH_ATTENTION[0], [], "a toy")


def test_the_embedding_read_places_v_among_q_and_k():
    # chapter 05's stored numbers: Q 0.149 > V 0.128 > K 0.093
    s = dp.embedding_read_sentence(6, 7, {"q": 0.149, "k": 0.093, "v": 0.128}, uniform=1 / 13)
    assert s == ("In the deep blocks 6–7, V's input puts **0.128** of its weight on the embedding, Q's 0.149 and "
                 "K's 0.093 (uniform: 0.077 at block 6): on average V reads the embedding more than K but less "
                 "than Q.")
    assert s.count("more than") == 1
    assert dp.embedding_read_sentence(6, 7, {"q": 0.1, "k": 0.09, "v": 0.2}, 0.077).endswith("more than Q and K.")
    assert dp.embedding_read_sentence(6, 7, {"q": 0.3, "k": 0.2, "v": 0.1}, 0.077).endswith("less than Q and K.")
