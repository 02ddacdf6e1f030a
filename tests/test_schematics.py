"""The drawn schematics (vrs_edu.viz.schematics): each draws its mechanism with the labels a learner needs, readable
on a 390-px phone (no wider than PHONE_WIDTH_IN, every text at the course's minimum size, no text over another or
outside the figure), and refuses arguments it cannot draw with a message naming them."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from vrs_edu.viz import schematics as S  # noqa: E402
from vrs_edu.viz.plots import overlapping_text, small_text  # noqa: E402

# What each schematic must say (substrings of its texts, mathtext included as written).
LABELS = {
    "residual_stream": ["embedding", "block 0", "block 1", "block 2", "logits", r"\mathrm{block}_l(h_l)"],
    "attention_halves": ["$q$", "$k$", "$v$", "where to look", "what gets moved", "pattern swap:", "value swap:"],
    "value_residual": ["computes $V_1$", "ResFormer:", "SVFormer:", "NeuTRENO:", r"\lambda_1 V_1"],
    "x0_into_qkv": ["stream $x_i$", "$x_0$", r"\alpha_q", r"\beta_v x_0", "$W_V$"],
    "bank_of_values": ["token id", "table $E_v$", r"E_v[\mathrm{id}]", "no $W_V$"],
    "input_substitution": ["stream $h_l$", "$x_0$", "$W_Q$", "$W_V$", "v reads x0", "not its context"],
    "k_eq_v_and_xsa": ["K = V", "$x\\,W_K$", "RoPE → $k$", "norm → $v$", "no $W_V$", "XSA", "$v_i$",
                       r"z_i \perp v_i"],
    "token_tables": ["value embeddings", "per-layer embeddings", "token id", "$E_l$[id]", "$P_l$[id]", "stream"],
    "hyper_connections": ["4 streams", "block $l$", "read: a mix (pre)", "write: to each (post)", "comb",
                          "rows, columns sum to 1"],
    "depth_mixer": ["ShortSWA over depth", "K = 3", "$X_0$", "$X_4$", "block 4", "sequence ShortSWA"],
    "kv_cache": ["baseline", "SVFormer", "bank", "layer", "not kept"],
    "shared_kv": ["baseline", "K = V", "CLA ×2", "layer", "read from the left"],
    "decoder_substitution": ["stream $h_l$", "token id", "table$_v$[id]", "$W_Q$", "unchanged"],
}

pytestmark = pytest.mark.usefixtures("course_style")   # tests/conftest.py


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def test_every_schematic_is_checked():
    assert set(LABELS) == set(S.SCHEMATICS)


@pytest.mark.parametrize("name", list(S.SCHEMATICS))
def test_the_schematic_draws_its_labels_readably_at_phone_width(name):
    fig = S.SCHEMATICS[name]()
    texts = " | ".join(_texts(fig))
    missing = [label for label in LABELS[name] if label not in texts]
    assert not missing, f"{name} lacks {missing}; it says: {texts}"
    assert fig.get_size_inches()[0] <= S.PHONE_WIDTH_IN
    assert small_text(fig) == []
    assert overlapping_text(fig) == []
    assert len(fig.axes[0].patches) >= 5, "a schematic is drawn: boxes and arrows"


def test_the_overlap_check_finds_text_over_text_and_outside():
    fig, ax = S._canvas(S.PHONE_WIDTH_IN, 2.0, "title")
    assert overlapping_text(fig) == []
    ax.text(S.PHONE_WIDTH_IN / 2, 1.9, "over the title", ha="center", va="top")
    ax.text(S.PHONE_WIDTH_IN + 0.5, 1.0, "off the page")
    found = overlapping_text(fig)
    assert "'title' / 'over the title'" in found and "'off the page' outside" in found


@pytest.mark.parametrize("window", [1, 3, 5])
def test_the_depth_mixer_reads_exactly_its_window_and_calls_the_full_window_full_memory(window):
    fig = S.depth_mixer(window=window, n_states=5)
    arrows = [p.get_gid() for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert arrows.count("depth-read") == window
    assert arrows.count("sequence-read") == window - 1     # the last position reads itself: no arrow
    assert ("full memory" in " ".join(_texts(fig))) == (window == 5)


def test_value_residual_draws_one_read_of_v1_per_later_layer():
    fig = S.value_residual(n_layers=5)
    assert [p.get_gid() for p in fig.axes[0].patches].count("v1-read") == 4
    assert "layer 5:  $A_5$ moves $V_5$" in _texts(fig)


def test_the_kv_cache_leaves_out_sv_formers_later_values_and_the_bank_layers_values():
    fig = S.kv_cache(n_layers=6)
    dashed = [p for p in fig.axes[0].patches if p.get_linestyle() == "--"]
    assert len(dashed) == 5 + 2                             # SVFormer: layers 1-5; bank: the last third, 4-5


def test_cla_leaves_out_the_odd_layers_cache_and_k_eq_v_keeps_both():
    fig = S.shared_kv(n_layers=6)
    dashed = [p for p in fig.axes[0].patches if p.get_linestyle() == "--"]
    assert len(dashed) == 2 * 3                             # CLA ×2: K and V of layers 1, 3 and 5
    assert _texts(fig).count("k") == 6                      # K = V: every layer's V made from its key projection


@pytest.mark.parametrize("n", [2, 4, 6])
def test_hyper_connections_read_every_stream_and_write_to_every_stream(n):
    fig = S.hyper_connections(n_streams=n)
    arrows = [p.get_gid() for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert arrows.count("hc-read") == n and arrows.count("hc-write") == n


@pytest.mark.parametrize("call, message", [
    (lambda: S.residual_stream(n_blocks=9), "n_blocks must be between 1 and 4, got 9"),
    (lambda: S.value_residual(n_layers=1), "n_layers must be between 2 and 5, got 1"),
    (lambda: S.depth_mixer(window=4, n_states=3), "window=4, n_states=3"),
    (lambda: S.kv_cache(n_layers=12), "n_layers must be between 3 and 6, got 12"),
    (lambda: S.shared_kv(n_layers=2), "n_layers must be between 3 and 6, got 2"),
    (lambda: S.decoder_substitution(path="o"), "path must be 'q', 'k' or 'v', got 'o'"),
    (lambda: S.input_substitution(path="x"), "path must be 'q', 'k' or 'v', got 'x'"),
    (lambda: S.hyper_connections(n_streams=1), "n_streams must be between 2 and 6, got 1"),
])
def test_arguments_it_cannot_draw_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
