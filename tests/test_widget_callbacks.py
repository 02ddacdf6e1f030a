"""Every widget of every chapter, driven without a browser: each control is moved (one step of its own, to both ends
of its own range or through its own options, and back), and every move must reach the callback, which must run
without raising and draw a figure that differs from the one before the move.

Why not just set a slider and look at it: ipywidgets catches any exception raised by an ``interactive`` callback
(outside a kernel it only logs a warning), so a widget whose callback is broken still builds, and its sliders still
move. Here the callback (``interactive.f``) is wrapped, so an exception, a call that draws nothing or a control
that does not reach the callback fails the test. The moves are read from each control (min, max, step, options),
so a change of range or step needs no change here.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import ipywidgets as W
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# --- the harness -------------------------------------------------------------------------------------------------

@dataclass
class Call:
    kwargs: dict
    error: BaseException | None = None
    # every figure left open by the callback, as the SHA-256 of its pixels (Agg, RGBA): two calls drew the same when
    # their digests are equal. The pixels, not a PNG: savefig draws the figure and then compresses it, about as long
    # again (measured 2026-12-06: 0.6 s a call with the PNG, 0.3 s without, over ~200 calls here).
    figures: list[bytes] = field(default_factory=list)
    drawn: bool = False                                   # some axes holds data (lines, bars, images, text)
    printed: str = ""


class CallbackSpy:
    """Wraps ``w.f`` (ipywidgets calls ``self.f`` on every move) and records what each call did."""

    def __init__(self, w: W.interactive):
        self.f, self.calls = w.f, []
        w.f = self

    def __call__(self, **kwargs):
        plt.close("all")
        call, out = Call(dict(kwargs)), io.StringIO()
        self.calls.append(call)
        try:
            with contextlib.redirect_stdout(out):
                result = self.f(**kwargs)
        except BaseException as e:       # recorded here, because ipywidgets will swallow it
            call.error = e
            raise
        finally:
            call.printed = out.getvalue()
            for n in plt.get_fignums():
                fig = plt.figure(n)
                fig.canvas.draw()
                call.figures.append(hashlib.sha256(fig.canvas.buffer_rgba()).digest())
                call.drawn |= any(ax.has_data() or ax.texts for ax in fig.axes)
            plt.close("all")
        return result


def moves(c: W.Widget) -> list:
    """Where to move a control, read from the control itself: one step from its value, both ends of its range (or
    the next, first and last option), then back to where it was."""
    if isinstance(c, W.FloatLogSlider):
        e = math.log(c.value, c.base)
        one = e + c.step if e + c.step <= c.max + 1e-9 else e - c.step
        return [c.base ** one, c.base ** c.min, c.base ** c.max, c.value]
    if isinstance(c, (W.IntSlider, W.FloatSlider)):
        step = c.step or (c.max - c.min) / 10
        one = c.value + step if c.value + step <= c.max else c.value - step
        return [one, c.min, c.max, c.value]
    if isinstance(c, (W.Dropdown, W.RadioButtons, W.ToggleButtons, W.Select, W.SelectionSlider)):
        n, i = len(c.options), c.index
        return [("index", (i + 1) % n), ("index", 0), ("index", n - 1), ("index", i)]
    if isinstance(c, (W.Checkbox, W.ToggleButton)):
        return [not c.value, c.value]
    pytest.fail(f"the harness does not know how to move a {type(c).__name__} ({c.description!r}): add it to moves()")


def _set(c: W.Widget, target) -> bool:
    """Move ``c``; False when it is already there (no move, so no callback is expected)."""
    if isinstance(target, tuple) and target[0] == "index":
        if c.index == target[1]:
            return False
        c.index = target[1]
        return True
    if c.value == target:
        return False
    c.value = target
    return True


def drive(w: W.interactive) -> dict[str, int]:
    """Move every control of ``w`` and check every call of its callback; returns {control: moves made}."""
    assert isinstance(w, W.interactive), f"not an ipywidgets.interactive: {type(w).__name__}"
    controls = [c for c in w.children if not isinstance(c, (W.Output, W.Button))]
    assert controls and set(map(id, controls)) == set(map(id, w.kwargs_widgets)), \
        "a control that is not an argument of the callback: moving it would re-run nothing"
    spy = CallbackSpy(w)
    w.update()                                   # the default setting, drawn as the widget shows it first
    _check(spy.calls[-1], "the default setting")
    made = {}
    for c in controls:
        made[c.description] = 0
        for target in moves(c):
            before = len(spy.calls)
            if not _set(c, target):
                continue
            made[c.description] += 1
            where = f"{c.description!r} moved to {c.value!r}"
            assert len(spy.calls) == before + 1, f"{where}: the callback was not called"
            call = spy.calls[-1]
            assert call.kwargs[c._kwarg] == c.get_interact_value(), f"{where}: the callback got {call.kwargs}"
            _check(call, where)
            previous = spy.calls[-2]
            assert (call.figures, call.printed) != (previous.figures, previous.printed), \
                f"{where}: the widget drew exactly what it drew before the move"
        assert made[c.description] >= 2, f"{c.description!r} could not be moved (range {moves(c)})"
    return made


def _check(call: Call, where: str) -> None:
    assert call.error is None, f"{where}: the callback raised {type(call.error).__name__}: {call.error}"
    assert call.figures, f"{where}: the callback drew no figure"
    assert call.drawn, f"{where}: the callback's figure is empty"


# --- the widgets, built as their chapters build them (small models) ------------------------------------------------

def _tiny(**kw) -> TinyGPT:
    torch.manual_seed(0)
    m = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=3, n_heads=2, block_size=8, seed=0, **kw))
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():                        # trained-looking weights, so that every knob changes the loss
        for p in m.parameters():
            if p.ndim >= 2:
                p.add_(0.3 * torch.randn(p.shape, generator=g))
    return m.eval()


def _batches(n: int = 2):
    g = torch.Generator().manual_seed(0)
    seq = torch.randint(13, (n, 4, 9), generator=g)
    return [(s[:, :-1], s[:, 1:]) for s in seq]


def _ch00(request):
    from vrs_edu.chapters.ch00_orientation.figures import stream_norm_widget
    return stream_norm_widget()


def _ch01(request):
    from vrs_edu.chapters.ch01_two_axes.figures import block_scale_widget
    (x, y), = _batches(1)
    return block_scale_widget(_tiny(), x, y, position=4, decode=lambda i: "abcdefghijklm"[i])


def _ch02(request):
    from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import blend_widget
    (x, y), = _batches(1)
    return blend_widget(_tiny(), x, y, layer=2, tokens=list("abcdefgh"))


def _ch02_norms(request):
    from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import norm_view_widget
    (x, y), = _batches(1)
    return norm_view_widget(_tiny(), x, tokens=list("abcdefgh"))


def _ch03(request):
    from vrs_edu.chapters.ch03_value_residual.figures import lambda_widget
    return lambda_widget(_tiny(value_residual="resformer"), _batches())


def _x0_model() -> TinyGPT:
    """Chapter 04's kind of model: QK-norm, and an x0 layer (layer 2) whose learned |β| are a few times |α| = 1 on
    every path, as training left them in chapter 04's checkpoint (where a factor on β = 0 would change nothing)."""
    m = _tiny(x0_mode="qkv", qk_norm=True)
    with torch.no_grad():
        for s, b in zip("qkv", (-4.0, 3.0, 2.5)):
            getattr(m.blocks[2].x0, f"beta_{s}").fill_(b)
    return m


def _ch04(request):
    from vrs_edu.chapters.ch04_bank_of_values.figures import beta_widget
    return beta_widget(_x0_model(), _batches())


def _ch05(request):
    from vrs_edu.nn.shortswa import depth_window_mask
    from vrs_edu.chapters.ch05_depth_as_sequence.figures import window_widget
    L = 6
    learned = {2: depth_window_mask(L, 2).float() / depth_window_mask(L, 2).sum(1, keepdim=True)}
    return window_widget(L, learned, window=2)   # K = 2 has learned weights, the other K do not: both branches


def _ch06(request):
    from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import kv_widget
    return kv_widget()


def _ch07(request):
    from vrs_edu.chapters.ch07_real_model import probes as P
    from vrs_edu.chapters.ch07_real_model import model as R
    from vrs_edu.chapters.ch07_real_model.figures import identity_widget
    real = request.getfixturevalue("real")       # skips, naming the extra to install, without the real model
    sentences = R.corpus_sentences(10, real=real)
    table = P.probe_table(P.collect_activations(real, sentences))
    return identity_widget(real, table["probes"], sentences[-3:], layer=3)


def _ch08(request):
    from vrs_edu.chapters.ch08_real_decoder.interventions import calibrate
    from vrs_edu.nn.llama import LlamaConfig, MiniLlama
    from vrs_edu.chapters.ch08_real_decoder.figures import substitution_widget
    torch.manual_seed(0)       # a small random decoder: the widget's logic does not need the real one
    m = MiniLlama(LlamaConfig(vocab_size=20, d_model=16, n_layers=3, n_heads=4, n_kv_heads=2, d_mlp=24,
                              max_positions=16)).eval()
    text = torch.randint(0, 20, (6, 9), generator=torch.Generator().manual_seed(1))
    tables = calibrate(m, text, torch.arange(6) % 2, torch.arange(20))
    demo = {"rows": tables.rows_for(torch.arange(20)), "row_of": {i: i for i in range(20)},
            "decode": lambda ids: f"t{ids[0]}"}
    sentences = {f"sentence {i}": (text[i], [f"t{int(t)}" for t in text[i]]) for i in range(2)}
    return substitution_widget(m, demo, sentences, {"early": [0], "middle": [1], "late": [2]})


# widget function (as the chapters call it) -> how to build it for the test
WIDGETS = {"stream_norm_widget": _ch00, "block_scale_widget": _ch01, "blend_widget": _ch02,
           "norm_view_widget": _ch02_norms, "lambda_widget": _ch03,
           "beta_widget": _ch04, "window_widget": _ch05, "kv_widget": _ch06, "identity_widget": _ch07,
           "substitution_widget": _ch08}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.slow
@pytest.mark.parametrize("name", WIDGETS)
def test_every_control_reaches_a_callback_that_draws(name, request):
    made = drive(WIDGETS[name](request))
    assert all(n >= 2 for n in made.values())


def test_every_widget_of_the_course_is_driven_here():
    """The widgets the chapters show and the widget functions the package defines are exactly the ones above, and
    no chapter builds a widget of its own (it would have no test)."""
    shown, own = set(), []
    for nb in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        src = nb.read_text()
        shown |= set(re.findall(r"\b(\w+_widget)\(", src))
        own += [f"{nb.name}: {m}" for m in re.findall(r"\b(?:interact|interactive|interact_manual)\(|import ipywidgets",
                                                       src)]
    defined = set()
    for mod in sorted([*(ROOT / "vrs_edu" / "viz").glob("*.py"), *(ROOT / "vrs_edu" / "chapters").glob("*/*.py")]):
        defined |= set(re.findall(r"^def (\w+_widget)\(", mod.read_text(), flags=re.M))
    assert not own, (f"a chapter builds its own widget; move it into its chapter's package (figures.py) and add it "
                     f"to WIDGETS: {own}")
    assert shown == set(WIDGETS), f"chapters show {sorted(shown)}, this file drives {sorted(WIDGETS)}"
    assert defined == set(WIDGETS), f"the package defines {sorted(defined)}, this file drives {sorted(WIDGETS)}"


# --- one step is visible -------------------------------------------------------------------------------------------

def test_chapter_04_one_step_of_each_slider_makes_a_visible_change_in_its_readout():
    """Issue 19: one step of every β slider must change something a learner can see. The loss barely moves for Q and
    K under QK-norm (that is chapter 04's lesson), so the promise is about what the readout prints: the moved
    path's x0 share by at least VISIBLE_SHARE, for Q and K the attention mass moved by at least VISIBLE_ATTENTION,
    the loss line states its change from the default, and the figure marks the new setting."""
    from vrs_edu.chapters.ch04_bank_of_values.figures import VISIBLE_ATTENTION, VISIBLE_SHARE, factor_label

    w = _ch04(None)
    spy = CallbackSpy(w)
    w.update()
    default = w.result
    sliders = {c.description: c for c in w.children if isinstance(c, W.FloatLogSlider)}
    assert set(sliders) == {"β_q ×", "β_k ×", "β_v ×"}
    for name, c in sliders.items():
        s = name[2]
        for target in (c.base ** (math.log(c.value, c.base) + c.step), c.base ** (math.log(c.value, c.base) - c.step)):
            c.value = target
            call = spy.calls[-1]
            _check(call, f"{name} moved to {target}")
            now = w.result
            assert now["factors"][s] == target, f"{name}: the callback got {call.kwargs}"
            share = sum(now["shares"][s]) / len(now["shares"][s])
            share0 = sum(default["shares"][s]) / len(default["shares"][s])
            assert abs(share - share0) >= VISIBLE_SHARE, f"{name} ×{target}: x0 share moved only {share - share0:+.4f}"
            if s in "qk":
                moved = sum(now["moved"]) / len(now["moved"])
                assert moved >= VISIBLE_ATTENTION, f"{name} ×{target}: attention moved only {moved:.2%}"
            printed = call.printed
            assert f"from the default {default['loss']:.4f}" in printed, printed
            assert f"β_{s} {factor_label(target):>6s}" in printed and "from the default)" in printed, printed
            c.value = 1.0
    assert all(call.error is None for call in spy.calls)


# --- the harness itself can fail ---------------------------------------------------------------------------------

def _toy(f):
    return W.interactive(f, a=W.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.5, description="a"))


def _draws(a):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, a])


def test_harness_passes_a_working_widget():
    assert drive(_toy(_draws)) == {"a": 4}      # 1.5, 0.0, 2.0, back to 1.0


@pytest.mark.parametrize("broken, message", [
    (lambda a: 1 / 0, "raised ZeroDivisionError"),
    (lambda a: print(a), "drew no figure"),
    (lambda a: plt.subplots(), "figure is empty"),
    (lambda a: _draws(1.0), "drew exactly what it drew before"),
])
def test_harness_fails_a_broken_callback(broken, message):
    with pytest.raises(AssertionError, match=message):
        drive(_toy(broken))


def test_harness_fails_a_control_the_callback_does_not_read():
    w = _toy(_draws)
    extra = W.IntSlider(value=1, min=0, max=3, description="orphan")
    w.children = (extra,) + w.children
    with pytest.raises(AssertionError, match="not an argument of the callback"):
        drive(w)
