"""Drawn schematics of the course's mechanisms: boxes and arrows, not data. One function per mechanism, each returns
its Figure; a chapter shows it before it measures anything (DESIGN.md, "A chapter's anatomy").

    residual_stream()        chapters 00-01: the stream as a running sum of block outputs
    attention_halves()       chapter 02: QK makes the pattern (where to look), V is what gets moved; the two swaps
    weight_times_norm()      chapter 02: attention is not only a weight, a contribution is α × ‖f(x)‖
    k_eq_v_and_xsa()         chapter 02: 2026's designs on the two halves, K = V (Gemma 4) and XSA
    value_residual()         chapter 03: where V_1 enters later layers (ResFormer, SVFormer, NeuTRENO)
    x0_into_qkv()            chapter 04: x0 mixed into the inputs of q, k and v (alpha x_i + beta x0)
    bank_of_values()         chapter 04: the bank lookup, a value read from a per-token table
    input_substitution(path) chapters 04 and 07: the input of Q, K or V replaced by x0 (the substitution ablation)
    token_tables()           chapter 04: the token again from a table, into V (value embeddings) or the stream
    depth_mixer(window)      chapter 05: a depth mixer's reads over layers; full window = full memory; the duality
    hyper_connections(n)     chapter 05: n residual streams, read before a block, written after, mixed (mHC)
    kv_cache()               chapter 06: what each variant keeps in the KV cache per token
    shared_kv(n_layers)      chapter 06: 2026's cache designs, K = V (Gemma 4) and KV shared across layers (CLA)
    decoder_substitution()   chapter 08: a projection of the real decoder replaced by a per-token table

Every schematic is drawn on a canvas measured in inches at most :data:`PHONE_WIDTH_IN` wide, so that on a 390-px
phone it fits the book's column without scrolling (at 80 dpi, 4.4 in is 352 px), with every text at the course's
minimum size (:data:`vrs_edu.viz.plots.MIN_FONT_PT`). Colours carry one meaning throughout the course: QK blue,
V orange, x0 / token identity green, the residual stream grey, depth mixing purple.

Every schematic takes ``lang`` (default: the running notebook's edition, :func:`vrs_edu.i18n.language.resolve_language`)
and labels its drawing in that edition's language; the mathematics is the same in both. A Korean schematic is drawn
with the Korean edition's fonts (:data:`vrs_edu.viz.plots.KOREAN_FONT_FAMILY`) whatever the current style, a label
that mixes Hangul with mathtext is set in NanumGothic (mathtext draws its plain text with one font, and DejaVu Sans
has no Hangul), and nothing is bold (NanumGothic has no face of matplotlib's bold weight: "findfont: Failed to find
font weight bold").
"""
from __future__ import annotations

import functools

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from vrs_edu.i18n.korean import particle
from vrs_edu.i18n.language import resolve_language
from vrs_edu.viz.plots import KOREAN_FONT_FAMILY, register_korean_font, set_mixed_korean_text

PHONE_WIDTH_IN = 4.4     # inches: the widest schematic (352 px at 80 dpi) fits a 390-px phone's column

QK = "#4C72B0"        # queries, keys, the pattern
V = "#DD8452"         # values, what gets moved
X0 = "#55A868"        # token identity: x0, tables indexed by the token id
STREAM = "#707070"    # the residual stream
MIXER = "#8172B3"     # reads over depth
INK = "#222222"


# ------------------------------------------------------------------------------------------------- drawing kit

def _edition(draw):
    """Decorate a schematic: resolve its ``lang`` (None: the running notebook's edition) and pass it on; a Korean
    drawing is made with the Korean edition's fonts, and each of its texts that mixes Hangul with mathtext is set in
    NanumGothic, which has both the Hangul and the Latin letters of the label."""
    @functools.wraps(draw)
    def schematic(*args, lang: str | None = None, **kwargs):
        lang = resolve_language(lang)
        if lang != "ko":
            return draw(*args, lang=lang, **kwargs)
        register_korean_font()
        with plt.rc_context({"font.family": KOREAN_FONT_FAMILY}):
            fig = draw(*args, lang=lang, **kwargs)
        return set_mixed_korean_text(fig)
    return schematic


def _bold(lang: str) -> str:
    """The weight of a heading: bold in English, normal in Korean (see the module's docstring)."""
    return "normal" if lang == "ko" else "bold"


def _canvas(width: float, height: float, title: str, lang: str = "en"):
    """A figure whose data coordinates are inches: (0, 0) bottom left, (width, height) top right."""
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    ax.text(width / 2, height - 0.08, title, ha="center", va="top", fontsize=plt.rcParams["axes.titlesize"],
            weight=_bold(lang), color=INK)
    return fig, ax


def _box(ax, x: float, y: float, w: float, h: float, text: str, color: str = STREAM, *, filled: bool = True,
         dashed: bool = False, gid: str | None = None):
    """A rounded box centred on (x, y), ``w`` by ``h`` inches, with ``text`` in its middle."""
    patch = FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.07",
                           ec=color, fc=to_rgba(color, 0.16 if filled else 0.0), lw=1.6,
                           ls="--" if dashed else "-", gid=gid)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", color=INK)
    return patch


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], color: str = STREAM, *, lw: float = 1.6,
           alpha: float = 1.0, rad: float = 0.0, gid: str | None = None):
    """An arrow from ``start`` to ``end`` (inches); ``rad`` bends it (matplotlib's arc3 connection)."""
    patch = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=13, lw=lw, color=color, alpha=alpha,
                            shrinkA=0, shrinkB=0, connectionstyle=f"arc3,rad={rad}", gid=gid)
    ax.add_patch(patch)
    return patch


def _plus(ax, x: float, y: float, r: float = 0.13):
    """The ⊕ where a block's write is added to the stream."""
    ax.add_patch(Circle((x, y), r, fc="white", ec=STREAM, lw=1.6, zorder=3))
    ax.plot([x - r * 0.6, x + r * 0.6], [y, y], color=STREAM, lw=1.6, zorder=4)
    ax.plot([x, x], [y - r * 0.6, y + r * 0.6], color=STREAM, lw=1.6, zorder=4)


# ------------------------------------------------------------------------------------------------- chapters 00-02

@_edition
def residual_stream(n_blocks: int = 3, *, lang: str | None = None):
    """The residual stream as a running sum: each block reads the stream and adds what it computes back into it.

    Drawn bottom to top, as depth grows: the embedding ``h_0``, ``n_blocks`` blocks, each reading ``h_l`` and
    writing ``block_l(h_l)`` into a ⊕ on the stream, and the read-out (final RMSNorm, unembedding, logits).
    Raises ValueError unless 1 <= n_blocks <= 4 (more would not fit a phone's screen).
    """
    if not 1 <= n_blocks <= 4:
        raise ValueError(f"n_blocks must be between 1 and 4, got {n_blocks}")
    step = 0.95
    height = 2.25 + step * n_blocks
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, height, "잔차 스트림: 누적 합" if ko else "The residual stream: a running sum", lang)
    sx = 1.05                                        # the stream's x
    _box(ax, sx, 0.35, 1.9, 0.42, "임베딩  $h_0$" if ko else "embedding  $h_0$", X0)
    y_top = 0.56 + step * n_blocks + 0.35
    ax.plot([sx, sx], [0.56, y_top], color=STREAM, lw=5, alpha=0.5, solid_capstyle="butt", zorder=1)
    for l in range(n_blocks):
        y = 0.56 + step * (l + 0.75)                 # the ⊕ of block l
        _plus(ax, sx, y)
        _box(ax, 3.15, y - 0.22, 1.6, 0.42, f"블록 {l}" if ko else f"block {l}", MIXER)
        _arrow(ax, (sx + 0.03, y - 0.44), (3.15 - 0.8, y - 0.30), STREAM, rad=0.15)       # reads h_l
        _arrow(ax, (3.15 - 0.8, y - 0.12), (sx + 0.14, y), MIXER, rad=0.15)              # writes into the sum
    ax.text(3.15, 0.35, "각 블록은 $h_l$을 읽고\n출력을 더합니다" if ko else "each block reads $h_l$\nand adds its output",
            ha="center", va="center", color=INK)
    _box(ax, sx, y_top + 0.3, 1.9, 0.5, "노름, 언임베딩\n→ 로짓" if ko else "norm, unembed\n→ logits", STREAM)
    ax.text(PHONE_WIDTH_IN / 2, y_top + 0.88, r"$h_{l+1} = h_l + \mathrm{block}_l(h_l)$", ha="center",
            va="center", color=INK)
    return fig


@_edition
def attention_halves(*, lang: str | None = None):
    """One attention layer split in two: q and k make the pattern (QK: where to look), v is what the pattern moves
    (V: what gets moved); below, chapter 02's two swaps, each taking one half from another input."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 4.6, "어텐션: QK는 경로를 정하고, V는 나른다" if ko
                      else "Attention: QK routes, V carries", lang)
    _box(ax, 2.2, 3.95, 3.6, 0.4, "스트림 $h$ (모든 위치)" if ko else "stream $h$ (every position)", STREAM)
    for x, name, color in ((0.75, "$q$", QK), (1.75, "$k$", QK), (3.45, "$v$", V)):
        _box(ax, x, 3.15, 0.6, 0.38, name, color)
        _arrow(ax, (x, 3.75), (x, 3.34), color)
    _box(ax, 1.25, 2.3, 2.3, 0.62, "패턴 $A$\n어디를 볼지" if ko else "pattern $A$\nwhere to look", QK)
    _arrow(ax, (0.75, 2.96), (0.95, 2.61), QK)
    _arrow(ax, (1.75, 2.96), (1.55, 2.61), QK)
    _box(ax, 2.7, 1.45, 2.6, 0.62, "$z = A\\,v$\n옮겨지는 것" if ko else "$z = A\\,v$\nwhat gets moved", V)
    _arrow(ax, (1.4, 1.99), (1.9, 1.76), QK)
    _arrow(ax, (3.45, 2.96), (3.3, 1.76), V)
    swaps = ((("패턴 교환:", "다른 텍스트의 $A$, 이 텍스트의 $v$"), ("값 교환:", "이 텍스트의 $A$, 다른 텍스트의 $v$"))
             if ko else (("pattern swap:", "$A$ of another text, $v$ of this one"),
                         ("value swap:", "$A$ of this text, $v$ of another")))
    for y, (name, what) in zip((0.82, 0.35), swaps):
        ax.text(0.1, y, name, ha="left", va="center", color=INK, weight=_bold(lang))
        ax.text(1.55, y, what, ha="left", va="center", color=INK)
    return fig


NORM_EXAMPLE = ((0.8, 0.5), (0.2, 3.0))   # (α, ‖f(x)‖) of the schematic's two sources: the weights and the norms
                                          # rank them in opposite orders (0.8 × 0.5 = 0.4 < 0.2 × 3.0 = 0.6)


@_edition
def weight_times_norm(*, lang: str | None = None):
    """Attention is not only a weight (Kobayashi et al., arXiv 2004.10102): what query i takes from source j is
    α_ij f(x_j), so its size is the weight α_ij (QK) times the length ‖f(x_j)‖ of the transformed value (V and O).
    Two sources of :data:`NORM_EXAMPLE`, drawn as bars: the one with the heavy weight but the short vector moves
    less than the one with the light weight and the long vector. Bars carry ``gid="weight"``, ``"norm"`` and
    ``"moved"`` (a test measures them)."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.3, "어텐션은 가중치만이 아닙니다" if ko else "Attention is not only a weight", lang)
    columns = ((1.05, ("가중치" if ko else "weight") + " $\\alpha$\n(QK)", QK, 1.0, "weight"),  # (left x, header,
               (2.2, "$\\Vert f(x)\\Vert$\n(V, O)", V, 0.28, "norm"),        # colour, inches per unit, gid); the
               (3.35, ("옮긴 양" if ko else "moved") + "\n$\\alpha\\,\\Vert f(x)\\Vert$", INK, 1.5, "moved"))  # last
    # column is the product of the two before it
    for x, header, _, _, _ in columns:
        ax.text(x + 0.5, 2.6, header, ha="center", va="center", color=INK)
    for r, (alpha, norm) in enumerate(NORM_EXAMPLE):
        y = 1.75 - 0.75 * r
        ax.text(0.1, y, f"원천 {r + 1}" if ko else f"source {r + 1}", ha="left", va="center", color=INK)
        ax.text(2.07, y, "×", ha="center", va="center", color=INK)
        ax.text(3.24, y, "=", ha="center", va="center", color=INK)
        for (x, _, color, scale, gid), value in zip(columns, (alpha, norm, alpha * norm)):
            ax.add_patch(Rectangle((x, y - 0.13), value * scale, 0.26, fc=to_rgba(color, 0.5), ec=color, gid=gid))
            ax.text(x, y + 0.17, f"{value:g}", ha="left", va="bottom", color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 0.3, "큰 가중치 × 짧은 벡터: 옮기는 것은 적음" if ko
            else "heavy weight × short vector: little moved", ha="center", va="center", color=INK)
    return fig


@_edition
def k_eq_v_and_xsa(*, lang: str | None = None):
    """Two 2026 designs on attention's two halves. **K = V** (Gemma 4's global layers, ``attention_k_eq_v``): one
    projection ``x W_K`` makes both halves, the key (normalised with a gain, then rotated) and the value (normalised
    without a gain, never rotated); there is no W_V. **XSA** (exclusive self-attention, arXiv 2603.09078): the
    head's output ``y_i`` loses its component along the token's own value ``v_i``; what is left, ``z_i``, is
    orthogonal to ``v_i`` and so carries only what came from other positions."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 4.3, "두 절반에 대한 두 설계" if ko else "Two designs on the two halves", lang)
    # K = V: one projection, two tensors
    ax.text(0.1, 3.75, "K = V", ha="left", va="center", color=INK, weight=_bold(lang))
    _box(ax, 0.55, 2.95, 0.8, 0.38, "$x$", STREAM)
    _box(ax, 1.65, 2.95, 0.9, 0.38, "$x\\,W_K$", QK)
    _arrow(ax, (0.95, 2.95), (1.2, 2.95), STREAM)
    # NanumGothic draws no arrow glyph in mathtext's plain text: the Korean labels put the arrow in the math
    _box(ax, 3.3, 3.4, 1.75, 0.38, "노름·g, RoPE $\\rightarrow k$" if ko else "norm·g, RoPE → $k$", QK)
    _box(ax, 3.3, 2.5, 1.75, 0.38, "노름 $\\rightarrow v$" if ko else "norm → $v$", V)
    _arrow(ax, (2.1, 3.05), (2.42, 3.35), QK)
    _arrow(ax, (2.1, 2.85), (2.42, 2.55), V)
    ax.text(1.65, 2.45, "$W_V$ 없음" if ko else "no $W_V$", ha="center", va="center", color=INK)
    # XSA: the output minus its projection on the token's own value
    ax.text(0.1, 1.85, "XSA", ha="left", va="center", color=INK, weight=_bold(lang))
    o = (0.7, 0.45)
    _arrow(ax, o, (2.3, 0.45), V, lw=2.2)                                  # v_i, the token's own value
    ax.text(2.4, 0.45, "$v_i$", ha="left", va="center", color=V)
    _arrow(ax, o, (1.9, 1.55), INK)                                        # y_i = sum_j A_ij v_j
    ax.text(1.95, 1.65, "$y_i = \\sum_j A_{ij} v_j$", ha="left", va="center", color=INK)
    ax.plot([1.9, 1.9], [0.45, 1.55], color=INK, lw=1.2, ls="--")        # the component XSA removes
    _arrow(ax, o, (0.7, 1.55), QK)                                         # z_i = y_i - proj, orthogonal to v_i
    ax.text(0.82, 1.3, "$z_i \\perp v_i$", ha="left", va="center", color=QK)
    ax.text(2.9, 1.0, "$z_i = y_i - \\frac{y_i\\cdot v_i}{\\|v_i\\|^2} v_i$", ha="center", va="center",
            color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 0.13, "XSA는 $y_i$에서 $v_i$ 방향 성분을 뺍니다" if ko
            else "XSA removes the part of $y_i$ along $v_i$", ha="center", va="center", color=INK)
    return fig


# ------------------------------------------------------------------------------------------------- chapters 03-04

VALUE_RULES = {   # how layer n >= 2 uses V_1 (nn/value_residual.py, with its sources)
    "ResFormer": r"$U_n = A_n(\lambda_1 V_1 + \lambda_2 V_n)$",
    "SVFormer": r"$U_n = A_n V_1$   (no $W_V$)",
    "NeuTRENO": r"$U_n = A_n V_n + \lambda(V_1 - V_n)$",
}
VALUE_RULES_KO = {**VALUE_RULES, "SVFormer": r"$U_n = A_n V_1$   ($W_V$ 없음)"}


@_edition
def value_residual(n_layers: int = 4, *, lang: str | None = None):
    """Where V_1, the first layer's values, enters every later layer, and the three rules for mixing it in
    (:data:`VALUE_RULES`: ResFormer and SVFormer before the attention sum, NeuTRENO after it).
    Raises ValueError unless 2 <= n_layers <= 5."""
    if not 2 <= n_layers <= 5:
        raise ValueError(f"n_layers must be between 2 and 5, got {n_layers}")
    step = 0.62
    height = 1.85 + step * n_layers
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, height, "Value residual: 뒤쪽 층이 $V_1$을 다시 읽음" if ko
                      else "Value residual: later layers re-read $V_1$", lang)
    base = 1.35
    rail = 0.45
    for n in range(1, n_layers + 1):
        y = base + step * (n - 1)
        if ko:
            # the particles follow the subscript as read aloud: A₂가 (이), A₃이 (삼), V₂를, V₃을
            label = (f"{n}층:  $A_{n}${particle(str(n), '이/가')} $V_{n}${particle(str(n), '을/를')} 옮김"
                     if n > 1 else "1층이 $V_1$을 계산")
        else:
            label = f"layer {n}:  $A_{n}$ moves $V_{n}$" if n > 1 else "layer 1 computes $V_1$"
        _box(ax, 2.55, y, 2.9, 0.44, label, V if n == 1 else STREAM, filled=n == 1)
        if n > 1:
            _arrow(ax, (rail, y), (1.1, y), V, gid="v1-read")
    ax.plot([rail, rail], [base, base + step * (n_layers - 1)], color=V, lw=3, solid_capstyle="round")
    ax.plot([rail, 1.1], [base, base], color=V, lw=3)
    for i, (name, rule) in enumerate((VALUE_RULES_KO if ko else VALUE_RULES).items()):
        y = 0.95 - 0.32 * i
        ax.text(0.1, y, f"{name}:", ha="left", va="center", color=INK, weight=_bold(lang))
        ax.text(1.4, y, rule, ha="left", va="center", color=INK)
    return fig


@_edition
def x0_into_qkv(*, lang: str | None = None):
    """The bank-of-values experiment's injection: at a deep layer, the input of each projection mixes the stream
    x_i (context) with x0 (the token's own normalised embedding: identity, no context) with learned α, β; the
    published finding (β of V large, of Q and K near 0) is written under it."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.75, "q, k, v에 섞이는 x0" if ko else "x0 mixed into q, k and v", lang)
    _box(ax, 1.1, 3.1, 1.9, 0.52, "스트림 $x_i$\n(문맥)" if ko else "stream $x_i$\n(context)", STREAM)
    _box(ax, 3.3, 3.1, 1.9, 0.52, "$x_0$: 토큰\n(문맥 없음)" if ko else "$x_0$: token\n(no context)", X0)
    for x, name, color in ((0.8, "q", QK), (2.2, "k", QK), (3.6, "v", V)):
        _box(ax, x, 1.7, 1.25, 0.62, f"$\\alpha_{name} x_i$\n$+\\beta_{name} x_0$", color)
        _arrow(ax, (1.1, 2.84), (x - 0.15, 2.01), STREAM, lw=1.3)
        _arrow(ax, (3.3, 2.84), (x + 0.15, 2.01), X0, lw=1.3)
        ax.text(x, 1.08, f"$W_{name.upper()}$ → ${name}$", ha="center", va="center", color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 0.55, "발표된 결과: $\\beta_v$는 크고," if ko else "published: $\\beta_v$ large,",
            ha="center", va="center", color=INK)
    tested = "(04장이 검정하는 것)" if ko else "(what ch. 04 tests)"
    ax.text(PHONE_WIDTH_IN / 2, 0.25, "$\\beta_q, \\beta_k \\approx 0$ " + tested, ha="center", va="center", color=INK)
    return fig


@_edition
def bank_of_values(*, lang: str | None = None):
    """The bank lookup: a bank layer's value is a row of a learned per-layer table, indexed by the token id, so it
    needs no W_V and nothing of the context (and no V cache)."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.55, "값 뱅크: 표에서 가져오는 V" if ko else "The bank of values: V from a table",
                      lang)
    _box(ax, 0.85, 2.45, 1.45, 0.5, "토큰 id" if ko else "token id", X0)
    rows = ["the", "cat", "sat", "…"]
    for i, word in enumerate(rows):
        y = 2.75 - 0.3 * i
        _box(ax, 2.85, y, 1.5, 0.26, "", X0, filled=word == "cat")
        ax.text(2.2, y, word, ha="left", va="center", color=INK)
    ax.text(2.85, 2.95, "표 $E_v$ (|V|개 행)" if ko else "table $E_v$ (|V| rows)", ha="center", va="bottom",
            color=INK)
    _arrow(ax, (1.58, 2.45), (2.1, 2.45), X0)
    _box(ax, 2.85, 1.2, 2.4, 0.5, r"$v = \gamma \cdot E_v[\mathrm{id}]$", V)
    _arrow(ax, (2.85, 1.75), (2.85, 1.46), V)
    ax.text(PHONE_WIDTH_IN / 2, 0.52, "$W_V$도 문맥도 없고," if ko else "no $W_V$, no context,", ha="center",
            va="center", color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 0.22, "V로 캐시할 것도 없음" if ko else "nothing to cache for V", ha="center",
            va="center", color=INK)
    return fig


@_edition
def input_substitution(path: str = "v", *, lang: str | None = None):
    """The substitution ablation (chapters 04 and 07): at one layer, the input of one projection (``path``: ``"q"``,
    ``"k"`` or ``"v"``), normally the stream h_l, is x0 instead (the token without its context); the other two
    still read the stream. A path that needs only what x0 holds tolerates it. Raises ValueError for another
    ``path``."""
    if path not in ("q", "k", "v"):
        raise ValueError(f"path must be 'q', 'k' or 'v', got {path!r}")
    ko = lang == "ko"     # q, k and v end in a vowel when read (큐, 케이, 브이): 가, 는
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.3, f"대체 절제: {path}가 x0을 읽음" if ko
                      else f"Substitution ablation: {path} reads x0", lang)
    _box(ax, 1.15, 2.6, 2.0, 0.45, "스트림 $h_l$" if ko else "stream $h_l$", STREAM)
    _box(ax, 3.45, 2.6, 1.5, 0.45, "$x_0$", X0)
    for x, name in ((0.6, "q"), (1.7, "k"), (2.8, "v")):
        replaced = name == path
        _box(ax, x, 1.45, 0.62, 0.42, f"$W_{name.upper()}$", V if name == "v" else QK)
        if replaced:
            _arrow(ax, (3.45, 2.37), (x + 0.1, 1.67), X0, lw=2.2)
        else:
            _arrow(ax, (1.15, 2.37), (x, 1.67), STREAM)
    ax.text(PHONE_WIDTH_IN / 2, 0.75, f"{path}는 문맥이 아니라 토큰을 봅니다." if ko
            else f"{path} sees the token, not its context:", ha="center", va="center", color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 0.42, "출력의 변화 = 문맥이 얼마나 필요했는가" if ko
            else "the output's change: how much it needed it", ha="center", va="center", color=INK)
    return fig


@_edition
def token_tables(*, lang: str | None = None):
    """Two shipped ways to give deep layers the token again, from a table indexed by its id. **Value embeddings**
    (nanochat, modded-nanogpt): layer l adds a gated row of its table to its values, ``v ← v + g · E_l[id]`` (the
    token enters through V). **Per-layer embeddings** (Gemma 3n and the small Gemma 4 models,
    ``hidden_size_per_layer_input``): a small per-layer row ``P_l[id]`` is projected and written into the residual
    stream after layer l's MLP (the token enters the stream, and every later Q, K and V reads it)."""
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.6, "표에서 다시 가져오는 토큰" if ko else "The token again, from a table", lang)
    stream = "스트림" if ko else "stream"
    for x, title, table, into, color in ((1.1, "값 임베딩" if ko else "value embeddings", "$E_l$[id]",
                                          "$v + g\\cdot E_l$[id]", V),
                                         (3.3, "층별 임베딩" if ko else "per-layer embeddings", "$P_l$[id]",
                                          stream + " $+\\,W P_l$[id]", STREAM)):
        ax.text(x, 3.05, title, ha="center", va="center", color=INK, weight=_bold(lang))
        _box(ax, x, 2.45, 1.3, 0.42, "토큰 id" if ko else "token id", X0)
        _box(ax, x, 1.6, 1.3, 0.42, table, X0)
        _box(ax, x, 0.75, 1.95, 0.42, into, color)
        _arrow(ax, (x, 2.24), (x, 1.81), X0)
        _arrow(ax, (x, 1.39), (x, 0.96), X0)
    ax.text(PHONE_WIDTH_IN / 2, 0.2, "층 l의 V로, 또는 그 층 뒤의 스트림으로" if ko
            else "into V at layer l, or into the stream after it", ha="center", va="center", color=INK)
    return fig


# ------------------------------------------------------------------------------------------------- chapter 05

@_edition
def depth_mixer(window: int = 3, n_states: int = 5, *, lang: str | None = None):
    """A depth mixer's read: the input of block l is a weighted read of the last ``window`` layer states
    X_{l-K+1}..X_l of the same token (causal ShortSWA over depth); ``window = n_states`` is the full window, full
    memory. Below, the same operator on the sequence axis (sequence ShortSWA): a position reads the last K positions.
    Read arrows carry ``gid="depth-read"`` / ``"sequence-read"`` (a test counts them).
    Raises ValueError unless 1 <= window <= n_states <= 6."""
    if not 1 <= window <= n_states <= 6:
        raise ValueError(f"need 1 <= window <= n_states <= 6, got window={window}, n_states={n_states}")
    step = 0.42
    top = 0.95 + 1.25 + step * n_states
    ko = lang == "ko"
    full = (" = 전체 메모리" if ko else " = full memory") if window == n_states else ""
    fig, ax = _canvas(PHONE_WIDTH_IN, top + 0.55, f"깊이 방향 ShortSWA: K = {window}{full}" if ko
                      else f"ShortSWA over depth: K = {window}{full}", lang)
    base = 1.95
    for j in range(n_states):
        y = base + step * j
        read = j >= n_states - window
        _box(ax, 0.75, y, 1.1, 0.32, f"$X_{j}$", MIXER if read else STREAM, filled=read)
        if read:
            w = 0.35 + 0.65 * (j - (n_states - window) + 1) / window     # newer states drawn heavier
            _arrow(ax, (1.32, y), (2.55, base + step * (n_states - 1) / 2), MIXER, lw=1 + 2 * w, alpha=w,
                   gid="depth-read")
    ax.text(0.75, base + step * n_states - 0.08, "깊이 ↑" if ko else "depth ↑", ha="center", va="center", color=INK)
    _box(ax, 3.4, base + step * (n_states - 1) / 2, 1.6, 0.62,
         f"블록 {n_states - 1}의\n입력" if ko else f"input of\nblock {n_states - 1}", MIXER)
    ax.text(PHONE_WIDTH_IN / 2, 1.45, "시퀀스를 따라 하는 같은 읽기" if ko else "the same read along the sequence",
            ha="center", va="center", color=INK)
    ax.text(PHONE_WIDTH_IN / 2, 1.15, "(시퀀스 방향 ShortSWA):" if ko else "(sequence ShortSWA):", ha="center",
            va="center", color=INK)
    for t in range(n_states):
        x = 0.45 + 0.72 * t
        read = t >= n_states - window
        _box(ax, x, 0.45, 0.58, 0.32, f"$t_{t}$", QK if read else STREAM, filled=read)
        if read and t < n_states - 1:
            _arrow(ax, (x, 0.62), (0.45 + 0.72 * (n_states - 1) - 0.1, 0.63), QK, rad=-0.45, gid="sequence-read")
    return fig


@_edition
def hyper_connections(n_streams: int = 4, *, lang: str | None = None):
    """Hyper-connections (arXiv 2409.19606) and mHC (arXiv 2512.24880, DeepSeek-V4's ``hc_mult``): ``n_streams``
    residual streams instead of one. Before a block, one learned mix of the streams is its input (the read,
    ``pre``); the block's output is written back to each stream with its own weight (``post``); and the streams are
    mixed with each other by an n × n matrix (``comb``), which mHC projects by Sinkhorn onto the doubly-stochastic
    matrices (every row and column sums to 1). Raises ValueError unless 2 <= n_streams <= 6."""
    if not 2 <= n_streams <= 6:
        raise ValueError(f"n_streams must be between 2 and 6, got {n_streams}")
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.9, f"하이퍼 커넥션: 스트림 {n_streams}개" if ko
                      else f"Hyper-connections: {n_streams} streams", lang)
    xs = [0.35 + 0.3 * i for i in range(n_streams)]
    for x in xs:
        ax.plot([x, x], [0.45, 3.25], color=STREAM, lw=3, alpha=0.5, solid_capstyle="butt", zorder=1)
    ax.text((xs[0] + xs[-1]) / 2, 0.25, "스트림들" if ko else "streams", ha="center", va="center", color=INK)
    _box(ax, (xs[0] + xs[-1]) / 2, 0.8, xs[-1] - xs[0] + 0.3, 0.36, "comb", MIXER)    # the streams' n × n mix
    bx = 3.2
    _box(ax, bx, 2.0, 1.4, 0.5, "블록 $l$" if ko else "block $l$", MIXER)
    for x in xs:
        _arrow(ax, (x, 1.2), (bx - 0.7, 1.85), STREAM, lw=1.0, gid="hc-read")     # pre: the read
        _arrow(ax, (bx - 0.7, 2.15), (x, 2.8), MIXER, lw=1.0, gid="hc-write")     # post: the write
    ax.text(bx, 1.3, "읽기: 혼합 하나 (pre)" if ko else "read: a mix (pre)", ha="center", va="center", color=INK)
    ax.text(bx, 2.7, "쓰기: 스트림마다 (post)" if ko else "write: to each (post)", ha="center", va="center", color=INK)
    ax.text(bx - 0.1, 0.8, "comb이 스트림을 섞음;" if ko else "streams mixed by comb;", ha="center", va="center",
            color=INK)
    ax.text(bx - 0.1, 0.5, "mHC: 행과 열의 합이 1" if ko else "mHC: rows, columns sum to 1", ha="center",
            va="center", color=INK)
    return fig


# ------------------------------------------------------------------------------------------------- chapter 06

def _cache_legend(ax, lang: str, dashed: str):
    """The legend under a cache drawing: K and V boxes kept, ``dashed`` says what a dashed box is."""
    ax.text(0.1, 0.28, "K", ha="left", va="center", color=QK, weight=_bold(lang))
    ax.text(0.4, 0.28, "유지" if lang == "ko" else "kept", ha="left", va="center", color=INK)
    ax.text(1.3, 0.28, "V", ha="left", va="center", color=V, weight=_bold(lang))
    ax.text(1.6, 0.28, ("유지;  점선: " if lang == "ko" else "kept;  dashed: ") + dashed, ha="left", va="center",
            color=INK)


@_edition
def kv_cache(n_layers: int = 6, *, lang: str | None = None):
    """What a decoder keeps per token in its KV cache, layer by layer: the baseline caches K and V at every layer;
    SVFormer caches V once (layer 0's, which every layer reuses); bank-of-values layers (the last third) cache no V
    (their values are a table lookup of the token id). Raises ValueError unless 3 <= n_layers <= 6."""
    if not 3 <= n_layers <= 6:
        raise ValueError(f"n_layers must be between 3 and 6, got {n_layers}")
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.2, "토큰당 KV 캐시, 층별로" if ko else "KV cache per token, layer by layer",
                      lang)
    bank_from = n_layers - n_layers // 3
    col0, col = 1.5, (PHONE_WIDTH_IN - 1.55) / n_layers
    for l in range(n_layers):
        ax.text(col0 + col * (l + 0.5), 2.6, f"{l}", ha="center", va="center", color=INK)
    ax.text(0.1, 2.6, "층" if ko else "layer", ha="left", va="center", color=INK)
    rows = [("기준선" if ko else "baseline", lambda l: "V"), ("SVFormer", lambda l: "V" if l == 0 else None),
            ("값 뱅크" if ko else "bank", lambda l: None if l >= bank_from else "V")]
    for r, (name, value) in enumerate(rows):
        y = 2.05 - 0.62 * r
        ax.text(0.1, y, name, ha="left", va="center", color=INK)
        for l in range(n_layers):
            x = col0 + col * (l + 0.5)
            _box(ax, x, y + 0.13, col * 0.8, 0.22, "", QK)              # K: every layer, every variant
            v = value(l)
            _box(ax, x, y - 0.13, col * 0.8, 0.22, "", V, filled=v is not None, dashed=v is None)
    _cache_legend(ax, lang, "유지 안 함" if ko else "not kept")
    return fig


@_edition
def shared_kv(n_layers: int = 6, *, lang: str | None = None):
    """Two designs of 2026's decoders, drawn as :func:`kv_cache` draws a cache: **K = V** (Gemma 4's global
    layers, ``attention_k_eq_v``): V is computed from the key projection, no W_V, and still cached beside the
    rotated K; **CLA ×2** (cross-layer attention, arXiv 2405.12981; Gemma 4's ``num_kv_shared_layers``): every
    odd layer reads the K and V its even neighbour cached and caches none. Raises ValueError unless
    3 <= n_layers <= 6."""
    if not 3 <= n_layers <= 6:
        raise ValueError(f"n_layers must be between 3 and 6, got {n_layers}")
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.2, "K = V, 그리고 두 층이 함께 쓰는 캐시" if ko
                      else "K = V and a cache shared by two layers", lang)
    col0, col = 1.5, (PHONE_WIDTH_IN - 1.55) / n_layers
    for l in range(n_layers):
        ax.text(col0 + col * (l + 0.5), 2.6, f"{l}", ha="center", va="center", color=INK)
    ax.text(0.1, 2.6, "층" if ko else "layer", ha="left", va="center", color=INK)
    for r, name in enumerate(("baseline", "K = V", "CLA ×2")):
        y = 2.05 - 0.62 * r
        ax.text(0.1, y, "기준선" if ko and name == "baseline" else name, ha="left", va="center", color=INK)
        for l in range(n_layers):
            x = col0 + col * (l + 0.5)
            shared = name == "CLA ×2" and l % 2 == 1
            _box(ax, x, y + 0.13, col * 0.8, 0.22, "", QK, filled=not shared, dashed=shared)
            # K = V: the value is made from the key projection (blue ink in an orange box), still cached
            _box(ax, x, y - 0.13, col * 0.8, 0.22, "k" if name == "K = V" else "", V, filled=not shared,
                 dashed=shared)
            if shared:   # reads its even neighbour's cache
                _arrow(ax, (x - col * 0.55, y), (x - col * 0.42, y), INK, lw=1.2)
    _cache_legend(ax, lang, "왼쪽 층의 것을 읽음" if ko else "read from the left")
    return fig


# ------------------------------------------------------------------------------------------------- chapter 08

@_edition
def decoder_substitution(path: str = "v", *, lang: str | None = None):
    """The real decoder's context-free substitution: at one layer, the projection of ``path`` (``"q"``, ``"k"`` or
    ``"v"``), which reads the stream, is replaced by a per-token table indexed by the token id — does that path
    carry only token identity? Raises ValueError for another ``path``."""
    if path not in ("q", "k", "v"):
        raise ValueError(f"path must be 'q', 'k' or 'v', got {path!r}")
    ko = lang == "ko"
    fig, ax = _canvas(PHONE_WIDTH_IN, 3.6, f"대체: 토큰별 표에서 읽는 {path}" if ko
                      else f"Substitution: {path} from a per-token table", lang)
    _box(ax, 1.15, 2.95, 2.0, 0.45, "스트림 $h_l$" if ko else "stream $h_l$", STREAM)
    _box(ax, 3.35, 2.95, 1.6, 0.45, "토큰 id" if ko else "token id", X0)
    color = V if path == "v" else QK
    for x, name in ((0.55, "q"), (1.15, "k"), (1.75, "v")):
        replaced = name == path
        _box(ax, x, 1.95, 0.52, 0.4, f"$W_{name.upper()}$", V if name == "v" else QK, filled=not replaced,
             dashed=replaced)
        _arrow(ax, (x, 2.72), (x, 2.16), STREAM, lw=1.2, alpha=0.35 if replaced else 1.0)
        if replaced:
            ax.plot([x - 0.3, x + 0.3], [1.7, 2.2], color="#C44E52", lw=2.5)
    _box(ax, 3.35, 1.95, 1.6, 0.45, f"{'표' if ko else 'table'}$_{path}$[id]", X0)
    _arrow(ax, (3.35, 2.72), (3.35, 2.18), X0)
    target = {"q": 0.55, "k": 1.15, "v": 1.75}[path]
    _box(ax, 2.2, 0.95, 1.3, 0.42, f"${path}$", color)
    _arrow(ax, (3.0, 1.72), (2.6, 1.17), X0)
    _arrow(ax, (target + 0.2, 1.75), (1.75, 1.17), STREAM, lw=1.2, alpha=0.35)
    ax.text(PHONE_WIDTH_IN / 2, 0.32, "모델의 나머지는 그대로" if ko else "the rest of the model unchanged",
            ha="center", va="center", color=INK)
    return fig


SCHEMATICS = {   # name -> function: what the tests draw and check
    "residual_stream": residual_stream, "attention_halves": attention_halves, "value_residual": value_residual,
    "x0_into_qkv": x0_into_qkv, "bank_of_values": bank_of_values, "input_substitution": input_substitution,
    "depth_mixer": depth_mixer, "k_eq_v_and_xsa": k_eq_v_and_xsa, "token_tables": token_tables,
    "hyper_connections": hyper_connections,
    "kv_cache": kv_cache, "shared_kv": shared_kv, "decoder_substitution": decoder_substitution,
}
