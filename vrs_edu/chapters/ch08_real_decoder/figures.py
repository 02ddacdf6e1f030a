"""Chapter 08's figures and widget: the real decoder's loss changes per third and per layer, what its layers read,
its attention read by weights and by norms (``decoder-norms``), the KV price list, and the widget that replaces Q, K
or V of a layer (or a third) by its per-token table for one sentence. The numbers come from
:mod:`vrs_edu.chapters.ch08_real_decoder.readout`, :mod:`vrs_edu.chapters.ch08_real_decoder.norms` and the stored
results; this module draws."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from vrs_edu.chapters.ch08_real_decoder.norms import SINK_EPS
from vrs_edu.chapters.ch08_real_decoder.prose import THIRD_KO, condition_name, where_name
from vrs_edu.chapters.ch08_real_decoder.readout import substitution_readout
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.analysis import layer_means, t_test
from vrs_edu.viz.controls import change_from_default, label_style
from vrs_edu.viz.schematics import QK, X0, V

COLORS = {"Q table": QK, "K table": "#64B5CD", "V table": V, "V := W_V·norm(x0)": X0,
          "Q table (shrunk)": "#2A6F97", "K table (shrunk)": "#8FC9E0", "V table (shrunk)": "#E6A06C",
          "Q := W_Q·norm(x0)": "#3B3B8F", "K := W_K·norm(x0)": "#8172B3",
          "uniform pattern": "#8172B3", "previous layer's pattern": "#937860", "pattern swap": QK, "value swap": V}


def _err(c: dict) -> tuple[float, float]:
    return c["mean"] - c["ci"][0], c["ci"][1] - c["mean"]


def plot_thirds(result: dict, names=("Q table", "K table", "V table"), ax=None, title: str | None = None):
    """Bars: the loss change (nats per token, mean and 95 % interval over the evaluation sequences) of each
    condition in ``names`` applied to every layer of one third of the depth; the tolerance as a dashed line."""
    ax = ax or plt.subplots(figsize=(7.6, 3.6))[1]
    thirds = list(result["thirds"])
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        cells = [result["per_third"][f"{name} · {t}"] for t in thirds]
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(thirds))]
        lo_hi = list(zip(*[_err(c) for c in cells]))
        ax.bar(xs, [c["mean"] for c in cells], width, yerr=lo_hi, capsize=3, label=condition_name(name),
               color=COLORS.get(name, f"C{i}"))
    ax.axhline(result["tolerance"], color="0.3", ls="--", lw=1)
    ax.set_xticks(range(len(thirds)), [in_language(f"{t}\n(layers {result['thirds'][t][0]}-{result['thirds'][t][-1]})",
                                                   f"{THIRD_KO.get(t, t)}\n(층 {result['thirds'][t][0]}-"
                                                   f"{result['thirds'][t][-1]})") for t in thirds])
    ax.set_ylabel(in_language("Δ loss (nats / token)", "Δ 손실 (nats / 토큰)"))
    ax.set_title(title or in_language("replaced in every layer of one third", "3분의 1 구간의 모든 층에서 대체"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.figure.tight_layout()
    return ax.figure


def plot_layer_scan(result: dict, names=("Q table", "K table", "V table"), ax=None, title: str | None = None,
                    log: bool = False):
    """Lines: the loss change of each condition in ``names`` applied to one layer at a time (the layer scan's
    sequences), with its 95 % interval as a band; ``log``: a log axis for conditions whose costs span orders of
    magnitude, where a cost (or interval end) below :data:`FLOOR` — layer 0's exact tables, a rounding-size
    negative — is drawn at the floor (the chapter's text says so)."""
    ax = ax or plt.subplots(figsize=(7.6, 3.6))[1]
    scan = result["layer_scan"]["conditions"]
    floor = (lambda y: max(y, FLOOR) if y == y else y) if log else (lambda y: y)   # NaN (does not apply) stays
    for i, name in enumerate(names):
        m = [floor(y) for y in scan[name]["mean"]]
        ls = range(len(m))
        ax.plot(ls, m, marker="o", ms=3, label=condition_name(name), color=COLORS.get(name, f"C{i}"))
        ax.fill_between(ls, [floor(c[0]) for c in scan[name]["ci"]], [floor(c[1]) for c in scan[name]["ci"]],
                        alpha=0.2, color=COLORS.get(name, f"C{i}"))
    for t, layers in result["thirds"].items():
        ax.axvline(layers[0] - 0.5, color="0.7", lw=0.8)
    ax.axhline(result["tolerance"], color="0.3", ls="--", lw=1)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(bottom=FLOOR / 1.5)
    ax.set_xlabel(in_language("layer", "층"))
    ax.set_ylabel(in_language("Δ loss (nats / token)", "Δ 손실 (nats / 토큰)"))
    n_seq = len(result["layer_scan"]["sequences"])
    ax.set_title(title or in_language(f"one layer at a time ({n_seq} sequences)", f"한 번에 한 층씩 (시퀀스 {n_seq}개)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.figure.tight_layout()
    return ax.figure


def plot_reads(result: dict):
    """Two panels along depth: left, the held-out share of q, k, v a per-token table explains (table R²); right,
    what each layer's input is made of: its x0-R² (ridge from the token embedding) and its R² from the last few
    layers' writes."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.0, 3.6))
    r2 = result["describe"]["table_r2"]
    for p, c in zip("qkv", (QK, "#64B5CD", V)):
        a.plot(range(len(r2[p])), r2[p], marker="o", ms=3, color=c, label=p)
    a.set_ylim(0, 1)
    a.set_xlabel(in_language("layer", "층"))
    a.set_ylabel(in_language("table R² (held out)", "표의 R² (홀드아웃)"))
    a.set_title(in_language("q, k, v explained by the token", "토큰이 설명하는 q, k, v"))
    a.legend()
    pr = result["probes"]
    b.plot(range(len(pr["x0_r2"]["input"])), pr["x0_r2"]["input"], marker="o", ms=3, color=X0,
           label=in_language("from x0", "x0에서"))
    b.plot(range(len(pr["recent_r2"])), pr["recent_r2"], marker="o", ms=3, color="0.4",
           label=in_language(f"from last {pr['recent']} writes", f"직전 {pr['recent']}개 층이 쓴 것에서"))
    b.set_ylim(0, 1)
    b.set_xlabel(in_language("layer", "층"))
    b.set_ylabel(in_language("R² of the layer's input", "층 입력의 R²"))
    b.set_title(in_language("what a layer reads", "층이 읽는 것"))
    b.legend()
    fig.tight_layout()
    return fig


def plot_lens(result: dict):
    """The logit lens (loss if the stream entering layer l were read by the final norm and head) beside the direct
    logit attribution of each layer's attention and MLP writes (logit margin of the correct token)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.0, 3.6))
    lens = result["describe"]["logit_lens"]
    a.plot(range(len(lens)), lens, marker="o", ms=3, color="0.3")
    a.set_yscale("log")
    a.set_xlabel(in_language("depth (last point: the final state)", "깊이 (마지막 점: 최종 상태)"))
    a.set_ylabel(in_language("loss (nats, log scale)", "손실 (nats, 로그 축)"))
    a.set_title(in_language("logit lens", "로짓 렌즈"))
    dla = result["describe"]["dla"]
    L = len(dla["attn"])
    a_w = 0.4
    b.bar([l - a_w / 2 for l in range(L)], dla["attn"], a_w, color=QK, label=in_language("attention", "어텐션"))
    b.bar([l + a_w / 2 for l in range(L)], dla["mlp"], a_w, color="0.55", label="MLP")
    b.axhline(0, color="0.3", lw=0.8)
    b.set_xlabel(in_language("layer", "층"))
    b.set_ylabel(in_language("logit margin", "로짓 차이"))
    b.set_title(in_language("direct logit attribution", "직접 로짓 기여"))
    b.legend()
    fig.tight_layout()
    return fig


FLOOR = 2e-3   # nats: the price list's log axis draws a smaller (or negative) cost at this floor


def plot_price_list(result: dict, ax=None):
    """Each cache-saving substitution: the share of the KV cache it saves (x) against the nats it costs (y, log
    scale, with its 95 % interval; a cost below :data:`FLOOR` is drawn at the floor); squares: a whole third, dots:
    one layer; filled = within the tolerance (the dashed line)."""
    ax = ax or plt.subplots(figsize=(8.4, 3.8))[1]
    total = result["kv_bytes"]["total"]
    seen = set()
    for r in result["price_list"]:
        third = r["where"] in result["thirds"]
        cond = r["condition"]
        color = PRICE_COLORS.get(cond, "0.4")
        y = max(r["mean"], FLOOR)
        lo, hi = max(r["ci"][0], FLOOR), max(r["ci"][1], FLOOR)
        ax.errorbar(r["bytes_saved"] / total, y, yerr=[[y - lo], [hi - y]], fmt="s" if third else "o",
                    ms=8 if third else 5, color=color, mfc=color if r["within"] else "white",
                    alpha=0.9 if third else 0.6, label=None if cond in seen else condition_name(cond))
        seen.add(cond)
    ax.axhline(result["tolerance"], color="0.3", ls="--", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel(in_language("share of the KV cache saved", "절약한 KV 캐시의 비율"))
    ax.set_ylabel(in_language("Δ loss (nats / token)", "Δ 손실 (nats / 토큰)"))
    ax.set_title(in_language("price list (squares: a third, dots: one layer)", "가격표 (사각형: 3분의 1 구간, 점: 층 하나)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.figure.tight_layout()
    return ax.figure


PRICE_COLORS = {"K table": "#64B5CD", "V table": V, "V := W_V·norm(x0)": X0, "V := V_1": "#C44E52",
                "K table (shrunk)": "#8FC9E0", "V table (shrunk)": "#E6A06C", "K := W_K·norm(x0)": "#8172B3",
                "shared V": "#937860", "uniform pattern": "#8172B3", "previous layer's pattern": QK}


def _reading(ax, result: dict, key: str, label: str, color: str) -> None:
    """One reading of ``decoder-norms`` along depth: its per-layer mean over the sequences (line) and the 95 %
    interval of that mean (band)."""
    m = layer_means(result)[key]
    ci = [list(t_test(v)["ci"]) for v in result["per_layer"][key]]
    ax.plot(range(len(m)), m, marker="o", ms=3, color=color, label=label)
    ax.fill_between(range(len(m)), [c[0] for c in ci], [c[1] for c in ci], alpha=0.25, color=color)


def plot_sink_and_mixing(result: dict, eps: float = SINK_EPS):
    """Attention read by its weights and by its norms across the decoder's layers (a ``decoder-norms`` result:
    ``per_layer[reading]`` (L, n), the band the 95 % interval over the n sequences). Left: the first token's weight
    share, mean_h α_i0 (QK alone), beside its norm share, ‖Σ_h α_i0 f_h(x_0)‖ normalised per query (QK, V and O;
    Kobayashi et al., arXiv 2004.10102), the sink threshold ``eps`` dashed (Gu et al., arXiv 2410.10781). Right: the
    context-mixing ratio r with the residual counted (arXiv 2109.07152) beside the weights' reading 1 − α_ii and,
    between them, attention alone by its norms (where the result has it); thin lines and labels mark the thirds."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.0, 3.8))
    _reading(a, result, "weight_share", in_language("weight share (α)", "가중치 몫 (α)"), QK)
    _reading(a, result, "norm_share", in_language("norm share (‖α f(x)‖)", "노름 몫 (‖α f(x)‖)"), V)
    a.axhline(eps, color="0.3", ls="--", lw=1, label=in_language(f"sink: weight > {eps:g}", f"싱크: 가중치 > {eps:g}"))
    a.set_title(in_language("the first token: weight vs norm", "첫 토큰: 가중치 대 노름"))
    a.set_ylabel(in_language("share of the query's attention", "쿼리의 어텐션 중 몫"))
    _reading(b, result, "weight_mixing", in_language("1 − α_ii (weights)", "1 − α_ii (가중치)"), QK)
    if "attention_mixing" in result["per_layer"]:        # absent from a result made before it was read
        _reading(b, result, "attention_mixing", in_language("attention alone (norms)", "어텐션만 (노름)"), "0.45")
    _reading(b, result, "mixing", in_language("mixing ratio r (norms + residual)", "혼합 비율 r (노름 + 잔차)"), V)
    b.set_title(in_language("the context's share: weights vs norms", "문맥의 몫: 가중치 대 노름"))
    b.set_ylabel(in_language("context's share of the new state", "새 상태 중 문맥의 몫"))
    for name, layers in result["thirds"].items():
        if layers[0] > 0:
            b.axvline(layers[0] - 0.5, color="0.7", lw=0.8)
        b.text((layers[0] + layers[-1]) / 2, 0.02, in_language(f"{name} third", f"{THIRD_KO.get(name, name)} 3분의 1"),
               ha="center", va="bottom", color="0.4")
    for ax in (a, b):
        ax.set_ylim(0, 1)
        ax.set_xlabel(in_language("layer", "층"))
    a.legend(loc="upper left")
    b.legend(loc="center left", bbox_to_anchor=(0.1, 0.37))   # between the lines: layers 3-22, 0.25-0.5
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# The widget

def _where(choice: str, thirds: dict) -> list[int]:
    return thirds[choice] if choice in thirds else [int(choice.split()[-1])]


def substitution_text(out: dict, tokens: list[str], default_delta: float | None = None, shown: int = 8) -> str:
    """What the widget prints: the sentence's loss with and without the table, and the next-token predictions
    (top 1, clean → substituted) at the ``shown`` positions whose loss changed most (chosen once, for both
    languages), in the running edition's language."""
    ko = resolve_language(None) == "ko"
    change = (change_from_default(out["delta"], default_delta, ".3f", " nats")
              if default_delta is not None else f"{out['delta']:+.3f} nats")
    order = sorted(range(len(out["token_delta"])), key=lambda i: -abs(out["token_delta"][i]))[:shown]
    if ko:
        lines = [f"문장의 손실: 토큰당 {out['clean_loss']:.3f} → {out['loss']:.3f} nats (Δ {change})",
                 f"손실이 가장 많이 바뀐 다음 토큰 예측 ({len(tokens) - 1}개 중):"]
    else:
        lines = [f"loss of the sentence: {out['clean_loss']:.3f} → {out['loss']:.3f} nats per token (Δ {change})",
                 f"next-token predictions where the loss moved most (of {len(tokens) - 1}):"]
    words = ("이전", "다음", "예측") if ko else ("after", "next", "predicted")
    for i in sorted(order):
        lines.append(f"  {words[0]} {tokens[i]!r:14s} {words[1]} {tokens[i + 1]!r:12s} {words[2]} "
                     f"{out['clean_top'][i][0]!r:12s} → {out['top'][i][0]!r:12s} Δ {out['token_delta'][i]:+.2f}")
    return "\n".join(lines)


def substitution_figure(model, demo: dict, ids, tokens: list[str], thirds: dict, where: str = "late",
                        p: str = "v", default: tuple[str, str] = ("late", "v")):
    """The widget's figure: per predicted token, its loss change when ``p`` at ``where`` (a third's name or
    ``"layer N"``) reads its table. Returns ``(figure, readout dict, text)``."""
    layers = _where(where, thirds)
    out = substitution_readout(model, ids, demo["rows"], demo["row_of"], layers, p, decode=demo.get("decode"))
    base = substitution_readout(model, ids, demo["rows"], demo["row_of"], _where(default[0], thirds), default[1])
    fig, ax = plt.subplots(figsize=(10.0, 3.4))
    color = {"q": QK, "k": "#64B5CD", "v": V}[p]
    ax.bar(range(len(out["token_delta"])), out["token_delta"], color=color)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(range(len(tokens) - 1), [t.strip() or "␣" for t in tokens[1:]], rotation=60, ha="right")
    ax.set_ylabel(in_language("Δ loss (nats)", "Δ 손실 (nats)"))
    if resolve_language(None) == "ko":
        place = (f"{THIRD_KO.get(where, where)} 3분의 1의 모든 층" if where in thirds
                 else where.replace("layer ", "") + "층")
        ax.set_title(f"{place}에서 {p.upper()}를 표에서: 토큰당 Δ {out['delta']:+.3f} nats")
    else:
        place = f"every layer of the {where} third" if where in thirds else where
        ax.set_title(f"{p.upper()} from its table in {place}: Δ {out['delta']:+.3f} nats per token")
    fig.tight_layout()
    return fig, out, substitution_text(out, tokens, base["delta"])


def substitution_widget(model, demo: dict, sentences: dict, thirds: dict):
    """Choose a sentence, where (a third, or one layer) and which projection (Q, K or V) reads its per-token table;
    see the loss of each next-token prediction change. ``sentences`` maps a sentence to ``(ids, tokens)``;
    ``demo`` holds the stored table rows (``rows``, ``row_of``, ``decode``)."""
    L = model.cfg.n_layers
    options = list(thirds) + [f"layer {l}" for l in range(L)]
    first = next(iter(sentences))

    def show(sentence=first, where="late", projection="v"):
        ids, tokens = sentences[sentence]
        fig, _, text = substitution_figure(model, demo, ids, tokens, thirds, where, projection)
        plt.show()
        print(text)

    if resolve_language(None) == "ko":                  # Korean labels, the same values
        options = [(where_name(o), o) for o in options]

    return W.interactive(show,
                         sentence=W.Dropdown(options=[(s[:70] + ("..." if len(s) > 70 else ""), s) for s in sentences],
                                             value=first, description=in_language("sentence", "문장"),
                                             layout=W.Layout(width="95%"),
                                             style=label_style()),
                         where=W.Dropdown(options=options, value="late", description=in_language("where", "위치"),
                                          style=label_style()),
                         projection=W.ToggleButtons(options=[("Q", "q"), ("K", "k"), ("V", "v")], value="v",
                                                    description=in_language("replace", "대체"), style=label_style()))
