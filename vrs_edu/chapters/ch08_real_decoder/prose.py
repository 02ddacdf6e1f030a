"""Chapter 08's notebook lines: the sentences, table headers and titles its code cells print about SmolLM2-135M
and the stored ``real-decoder`` / ``decoder-norms`` results, each in ``lang`` (default: the running notebook's
edition, :func:`resolve_language`).

The English texts are the chapter's own, word for word (its stored outputs must not change); the Korean ones are
written for Korean word order and particles, their words chosen from the numbers exactly as the English are.
"""
from __future__ import annotations

import math

from vrs_edu.chapters.ch08_real_decoder.readout import ESTIMATOR_LABELS, ESTIMATOR_LABELS_KO
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language

# Chapter 02's interventions, as the chapter names them, and chapter 08's substitutions, in Korean (a formula such
# as ``V := W_V·norm(x0)`` is its own name in both editions).
CONDITIONS_KO = {"uniform pattern": "균등 패턴", "previous layer's pattern": "이전 층의 패턴",
                 "pattern swap": "패턴 교환", "value swap": "값 교환",
                 **{f"{p} table": f"{p} 표" for p in "QKV"}, **{f"{p} table (shrunk)": f"{p} 표 (수축)" for p in "QKV"},
                 "shared V": "공유 V"}
THIRD_KO = {"early": "초기", "middle": "중기", "late": "후기"}   # the thirds' names in Korean


def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def condition_name(name: str, lang: str | None = None) -> str:
    """A condition (an intervention or a substitution, e.g. ``"V table (shrunk)"``) as the edition names it:
    ``"V 표 (수축)"`` in Korean; a formula (``"V := V_1"``) as it is."""
    return CONDITIONS_KO.get(name, name) if _ko(lang) else name


def where_name(where: str, lang: str | None = None) -> str:
    """Where a substitution applies, a third (``"late"``) or one layer (``"layer 10"``), as the edition names it:
    ``"후기 3분의 1"``, ``"층 10"`` in Korean."""
    if not _ko(lang):
        return where
    if where in THIRD_KO:
        return f"{THIRD_KO[where]} 3분의 1"
    return where.replace("layer ", "층 ")


def model_line(name: str, cfg, n_params: int, file_name: str, lang: str | None = None) -> str:
    """The decoder in three lines: layers, width, heads, MLP, vocabulary, parameters and its checked file."""
    if _ko(lang):
        return (f"{name}: 층 {cfg.n_layers}개, d_model {cfg.d_model}, 쿼리 헤드 {cfg.n_heads}개가 "
                f"키/값 헤드 {cfg.n_kv_heads}개를 공유,\n    MLP {cfg.d_mlp}, 어휘 {cfg.vocab_size:,}개, "
                f"파라미터 {n_params / 1e6:.1f} M개;\n    파일 {file_name} (SHA-256 확인됨)")
    return (f"{name}: {cfg.n_layers} layers, d_model {cfg.d_model}, {cfg.n_heads} query heads "
            f"sharing {cfg.n_kv_heads} key/value heads,\n    MLP {cfg.d_mlp}, vocabulary "
            f"{cfg.vocab_size:,}, {n_params / 1e6:.1f} M parameters;\n    file "
            f"{file_name} (SHA-256 checked)")


def table_cost_sentence(result: dict, lang: str | None = None) -> str:
    """Last third: what Q, K and V read from their tables cost, which tolerates its table best, and the intervals'
    sizes and the tolerance line."""
    pt = result["per_third"]
    cost = {p: pt[f"{p} table · late"]["mean"] for p in "QKV"}
    best = min(cost, key=cost.get)
    tol = result["tolerance"]
    rise = f"{math.exp(tol) - 1:.0%}"
    if _ko(lang):
        return (f"마지막 3분의 1에서 표에서 읽은 V는 토큰당 **{cost['V']:.2f} nats**, Q는 **{cost['Q']:.2f}**, "
                f"K는 **{cost['K']:.2f}**의 비용이 듭니다(깨끗한 손실: {result['clean']['mean']:.2f} nats). 그곳에서 "
                f"자기 표를 가장 잘 견디는 투영은 **{best}**이고, 원문의 해석은 V를 예측합니다. (구간은 마지막 "
                f"3분의 1에서 시퀀스 {pt['V table · late']['n']}개, 나머지에서 {pt['V table · early']['n']}개에 걸친 "
                f"것이며, 점선은 {tol} nats, 곧 퍼플렉서티 {rise} 상승입니다.)")
    return (f"In the last third, V read from its table costs **{cost['V']:.2f} nats** per token, Q "
            f"**{cost['Q']:.2f}** and K **{cost['K']:.2f}** (the clean loss: "
            f"{result['clean']['mean']:.2f} nats). The projection that tolerates its table best there is "
            f"**{best}**; the article's reading predicts V. (Intervals over "
            f"{pt['V table · late']['n']} sequences "
            f"in the last third, {pt['V table · early']['n']} in the others; the dashed line: "
            f"{tol} nats, a {rise} rise in perplexity.)")


def parity_line(reference: str, n_tokens: int, agrees: bool, lang: str | None = None) -> str:
    """Whether every logit agrees with the transformers reference within 1e-4."""
    if _ko(lang):
        return f"{reference}, 토큰 {n_tokens}개: 모든 로짓이 1e-4 안에서 일치: {'예' if agrees else '아니요'}"
    return f"{reference}, {n_tokens} tokens: every logit agrees within 1e-4: {agrees}"


def rope_sentence(version: str, diff: float, lang: str | None = None) -> str:
    """The largest logit difference against transformers, and why it is RoPE's."""
    if _ko(lang):
        return (f"transformers {version}: 로짓 하나의 최대 차이 |MiniLlama − LlamaForCausalLM|는 이 컴퓨터에서 "
                f"{diff:.1e}입니다. RoPE에서 오는 차이입니다. transformers는 회전 각을 float32로, MiniLlama는 "
                "float64로 계산하며, transformers의 각을 그대로 주면 둘은 float32 반올림 안에서 일치합니다(테스트가 "
                "확인합니다).")
    return (f"transformers {version}: the largest difference of a logit, "
            f"|MiniLlama − LlamaForCausalLM|, is {diff:.1e} on this machine. It is RoPE's: "
            "transformers computes the rotation angles in float32, MiniLlama in float64; given "
            "transformers' own angles, the two agree to float32 rounding (a test checks it).")


def demo_sentence(sentence: str, out: dict, lang: str | None = None) -> str:
    """The demo sentence's loss, clean and with the last third's V from its table."""
    if _ko(lang):
        return (f"*{sentence}* — 마지막 3분의 1의 V를 표에서 가져오면, 이 문장의 손실은 토큰당 "
                f"{out['clean_loss']:.2f}에서 {out['loss']:.2f} nats로 바뀝니다.")
    return (f"*{sentence}* — with the last third's V from its table, the sentence's loss goes from "
            f"{out['clean_loss']:.2f} to {out['loss']:.2f} nats per token.")


def interventions_title(lang: str | None = None) -> str:
    """The title of chapter 02's interventions, one third at a time."""
    return "02장의 개입, 한 번에 3분의 1 구간씩" if _ko(lang) else "chapter 02's interventions, one third at a time"


def last_third_patterns_sentence(c: dict, names: tuple[str, ...], tolerance: float,
                                 lang: str | None = None) -> str:
    """Last third: each of chapter 02's interventions' cost (``c``: name -> cell; ``names``: uniform, previous
    layer's, pattern swap, value swap) and which pattern replacements stay within the tolerance."""
    within = [n for n in names[:3] if c[n]["ci"][1] < tolerance]
    if _ko(lang):
        inside = ", ".join(CONDITIONS_KO.get(n, n) for n in within) or "없음"
        return (f"마지막 3분의 1: 다른 시퀀스의 패턴은 {c['pattern swap']['mean']:.2f} nats, 이전 층의 패턴은 "
                f"{c[names[1]]['mean']:.2f}, 균등 어텐션은 {c[names[0]]['mean']:.2f}의 비용이 들고, 다른 시퀀스의 값은 "
                f"{c['value swap']['mean']:.2f}입니다. {tolerance} nats 허용 범위 안에 드는 패턴 대체: {inside}.")
    return (f"Last third: another sequence's pattern costs {c['pattern swap']['mean']:.2f} nats, the "
            f"previous layer's {c[names[1]]['mean']:.2f}, uniform attention {c[names[0]]['mean']:.2f}; another "
            f"sequence's values {c['value swap']['mean']:.2f}. Pattern replacements within the "
            f"{tolerance}-nat tolerance: {', '.join(within) or 'none'}.")


def layer_scan_sentence(cheap: list[int], n_layers: int, tol: float, n_scan: int, n_low: int, v_more: bool,
                        lang: str | None = None) -> str:
    """How many single layers tolerate another sequence's pattern (by the interval's upper end, and by the mean),
    and whether the value swap costs more than the pattern swap in the last third."""
    if _ko(lang):
        which = f"(층 {', '.join(map(str, cheap))})" if cheap else ""
        return (f"{n_layers}개 층 가운데 {len(cheap)}개 층이 홀로 다른 시퀀스의 패턴을 {tol} nats 안에서 견딥니다"
                f"{which}. 시퀀스 {n_scan}개에 걸친 구간의 위쪽 끝으로 본 것이며, 평균만으로 보면 {n_low}개입니다. "
                f"마지막 3분의 1 전체에서 값 교환은 패턴 교환보다 비용이 {'더 큽니다' if v_more else '더 작습니다'}.")
    which = f" (layers {', '.join(map(str, cheap))})" if cheap else ""
    return (f"{len(cheap)} of {n_layers} layers tolerate another sequence's pattern within {tol} nats "
            f"on their own, by the upper end of the interval over {n_scan} sequences{which}; "
            f"{n_low} by the mean alone. In the whole last third the value swap costs "
            f"{'more' if v_more else 'less'} than the pattern swap.")


def norms_size_sentence(n_sequences: int, seq_len: int, lang: str | None = None) -> str:
    """The decoder-norms run's sequences and the queries it reads."""
    if _ko(lang):
        return (f"(토큰 {seq_len}개짜리 시퀀스 {n_sequences}개; 쿼리 0은 자기 자신만 보므로 쿼리 1부터 "
                f"{seq_len - 1}까지.)")
    return (f"({n_sequences} sequences of {seq_len} tokens; "
            f"queries 1 to {seq_len - 1}, since query 0 sees only itself.)")


def split_sentence(sp: dict, lang: str | None = None) -> str:
    """The evaluation and calibration split, and how much of the evaluation text the calibration text covers."""
    if _ko(lang):
        return (f"토큰 {sp['seq_len']}개짜리 평가 시퀀스 {sp['n_eval']}개, 캘리브레이션 윈도 {sp['n_calib']}개"
                f"(토큰 {sp['calib_tokens']:,}개). 평가 위치의 {sp['coverage']:.1%}에 캘리브레이션 텍스트가 본 토큰이 "
                f"있습니다(5번 이상 본 토큰은 {sp['coverage_5']:.1%}). 더 많은 텍스트로 만든 표가 비용이 덜 드는지는 "
                "\"얼마나 확실한가?\"에서 확인합니다.")
    return (f"{sp['n_eval']} evaluation sequences of {sp['seq_len']} tokens, {sp['n_calib']} calibration "
            f"windows ({sp['calib_tokens']:,} tokens); {sp['coverage']:.1%} of the evaluation positions "
            f"hold a token the calibration text has seen ({sp['coverage_5']:.1%} at least 5 times). "
            "Whether a table from more text would cost less is checked in \"How sure are we?\".")


def x0_value_sentence(x0v: float, table_v: float, lang: str | None = None) -> str:
    """V from the embedding against V from the mean table, in the whole last third."""
    if _ko(lang):
        better = "표" if table_v < x0v else "W_V를 거친 임베딩"
        return (f"마지막 3분의 1 전체에서 V := W_V·norm(x0)의 비용은 {x0v:.2f} nats, 평균 표는 {table_v:.2f}입니다. "
                f"두 문맥 없는 값 가운데 여기서는 {attach(better, '이/가')} 더 낫습니다.")
    return (f"V := W_V·norm(x0) in the whole last third costs {x0v:.2f} nats, the mean table "
            f"{table_v:.2f}: of the two context-free values, the "
            f"{'table' if table_v < x0v else 'embedding through W_V'} is the better one here.")


def estimator_table(rows: list[list[str]], lang: str | None = None) -> tuple[list[str], list[list[str]]]:
    """(columns, rows) of :func:`~vrs_edu.chapters.ch08_real_decoder.readout.estimator_rows`, the estimators'
    names in ``lang``."""
    if _ko(lang):
        ko = {ESTIMATOR_LABELS[e]: ESTIMATOR_LABELS_KO[e] for e in ESTIMATOR_LABELS}
        return ["추정량", "Q", "K", "V", "시퀀스"], [[ko.get(r[0], r[0]), *r[1:]] for r in rows]
    return ["estimator", "Q", "K", "V", "sequences"], rows


def estimators_title(lang: str | None = None) -> str:
    """The title of the layer scan of the other estimators."""
    return "한 번에 한 층씩: 다른 추정량" if _ko(lang) else "one layer at a time: the other estimators"


def reads_sentence(late_r2: dict[str, float], r2: dict, cos: list[float], n_layers: int,
                   lang: str | None = None) -> str:
    """The last third's held-out table R² per projection (and layer 0's), and the mean cos(V_l, V_1)."""
    late = ", ".join(f"{p} {late_r2[p]:.2f}" for p in "qkv")
    mean_cos = sum(cos[1:]) / len(cos[1:])
    if _ko(lang):
        return (f"마지막 3분의 1에서 표의 홀드아웃 R²: {late} (층 0: q {r2['q'][0]:.2f}, k {r2['k'][0]:.2f}, "
                f"v {r2['v'][0]:.2f}). cos(V_l, V_1)은 층 1-{n_layers - 1}에 걸쳐 평균 {mean_cos:+.3f}입니다. 각 층의 "
                "W_V는 제 나름의 공간에 쓰므로, V_1은 뒤 층의 값을 대신할 수 없습니다.")
    return ("Held-out table R² in the last third: " + late
            + f" (layer 0: q {r2['q'][0]:.2f}, k {r2['k'][0]:.2f}, v {r2['v'][0]:.2f}). cos(V_l, V_1) "
            f"averages {mean_cos:+.3f} over layers 1-{n_layers - 1}: each layer's W_V writes "
            "into a space of its own, so V_1 is no stand-in for a later layer's values.")


def your_table_line(layer: int, clean: float, yours: float, lang: str | None = None) -> str:
    """The demo sentence's loss with one layer's V from the learner's table."""
    if _ko(lang):
        return f"내 표에서 가져온 층 {layer}의 V: 토큰당 {clean:.3f} → {yours:.3f} nats ({yours - clean:+.3f})"
    return f"layer {layer}'s V from your table: {clean:.3f} → {yours:.3f} nats per token ({yours - clean:+.3f})"


def lens_sentence(lens: list[float], late: list[int], late_share: float, x0_in: float, recent: int,
                  recent_in: float, lang: str | None = None) -> str:
    """The logit lens up to the last third and at the end, the last third's share of the direct logit
    attribution, and what the last third reads (x0-R², R² from the last ``recent`` layers' writes)."""
    floor = min(lens[1:late[0] + 1])
    if _ko(lang):
        return (f"렌즈 손실은 층 {late[0]}까지 {floor:.1f} nats 위에 머물다가 끝에서 {lens[-1]:.2f}로 떨어집니다. "
                f"마지막 3분의 1은 직접 로짓 기여의 {late_share:.0%}를 씁니다. 마지막 3분의 1이 읽는 것: x0-R² "
                f"{x0_in:.2f}, 직전 {recent}개 층이 쓴 것에서 얻은 R² {recent_in:.2f}.")
    return (f"The lens loss stays above {floor:.1f} nats up to layer {late[0]} and "
            f"falls to {lens[-1]:.2f} at the end; the last third writes {late_share:.0%} of the direct "
            f"logit attribution. What the last third reads: x0-R² {x0_in:.2f}, R² from the last "
            f"{recent} layers' writes {recent_in:.2f}.")


def price_sentence(ok: list[dict], rows: list[dict], thirds_ok: list[dict], kv: dict, cfg,
                   lang: str | None = None) -> str:
    """How many cache-saving substitutions stay within the tolerance, the most bytes one of them saves, and what
    the cache is made of."""
    most = max((r["bytes_saved"] for r in ok), default=0)
    if _ko(lang):
        return (f"캐시를 아끼는 대체 {len(rows)}개 가운데 {len(ok)}개가 허용 범위 안에 들며(표가 정확한 층 0의 것은 "
                f"제외), 그 가운데 {len(thirds_ok)}개는 3분의 1 구간 전체에 대한 것입니다. 하나가 아끼는 양은 토큰당 "
                f"{kv['total']:,}바이트 가운데 최대 {most:,}바이트입니다. (캐시: 층 {cfg.n_layers}개 × (K + V) × "
                f"헤드 {cfg.n_kv_heads}개 × 수 {cfg.head_dim}개 × {kv['bytes_per_number']}바이트, float16.)")
    return (f"{len(ok)} of the {len(rows)} cache-saving substitutions stay within the tolerance (layer "
            f"0's, whose tables are exact, left out), {len(thirds_ok)} of them for a whole third; "
            f"each saves "
            f"{most:,} bytes of "
            f"{kv['total']:,} per token at most. (The cache: {cfg.n_layers} layers × "
            f"(K + V) × {cfg.n_kv_heads} heads × {cfg.head_dim} numbers × "
            f"{kv['bytes_per_number']} bytes, float16.)")


def table_size_sentence(kv: dict, cfg, lang: str | None = None) -> str:
    """One layer's V table against the cache it replaces: the break-even, and whether one full-length sequence
    pays it off."""
    more = kv["table_per_layer"] > cfg.max_positions * kv["v_per_layer"]
    tokens = kv["table_per_layer"] // kv["v_per_layer"]
    if _ko(lang):
        return (f"한 층의 V 표는 수 {cfg.n_kv_heads * cfg.head_dim}개짜리 행 {cfg.vocab_size:,}개를 담으며"
                f"(float16으로 {kv['table_per_layer'] / 2 ** 20:.1f} MiB), 이는 그 층의 토큰 {tokens:,}개의 캐시와 "
                f"같습니다. 값 뱅크 논문이 제시하는 손익분기점입니다(4절). 이 모델의 문맥 {cfg.max_positions:,}토큰짜리 "
                f"시퀀스 하나에서는 표가 그것이 아끼는 캐시보다 메모리를 {'더' if more else '덜'} 씁니다. 표는 배치 "
                "전체에 걸쳐 이득이 됩니다.")
    return (f"One layer's V table holds {cfg.vocab_size:,} rows of {cfg.n_kv_heads * cfg.head_dim} numbers "
            f"({kv['table_per_layer'] / 2 ** 20:.1f} MiB in float16), the cache of "
            f"{tokens:,} tokens of that layer — the break-even the "
            f"bank-of-values paper gives (Sec. 4). For one sequence of this model's "
            f"{cfg.max_positions:,}-token context, a table costs "
            + ("more" if more else "less")
            + " memory than the cache it saves; it pays off across a batch.")


def bridge_sentence(b: dict, lang: str | None = None) -> str:
    """The pilot: the mean table against a table fitted by gradient descent, and the share of the cost recovered."""
    if _ko(lang):
        return (f"층 {b['layer']}, V: 평균 표의 비용은 {b['mean_table']['mean']:.3f} nats, 윈도 {b['batch']}개로 "
                f"{b['steps']}스텝 맞춘 표(Adam, lr {b['lr']})는 {b['fitted_table']['mean']:.3f}입니다. 비용의 "
                f"{b['recovered_share']:.0%}를 되찾았습니다. 실행 전에 정한 검정이 아니라 예비 실험입니다.")
    return (f"Layer {b['layer']}, V: the mean table costs {b['mean_table']['mean']:.3f} nats, the "
            f"fitted one {b['fitted_table']['mean']:.3f} after {b['steps']} steps of {b['batch']} windows "
            f"(Adam, lr {b['lr']}): {b['recovered_share']:.0%} of the cost recovered. A pilot, not one "
            "of the tests fixed before the run.")


def comparison_columns(lang: str | None = None) -> list[str]:
    """The columns of the toys-against-decoder table."""
    if _ko(lang):
        return ["발견", "장", "장난감 (저장된 결과, 판정 말뭉치)", "실제 디코더 (마지막 3분의 1)", "일치?"]
    return ["finding", "ch.", "toys (stored, verdict corpus)", "real decoder (last third)", "agree?"]


def chapter02_sentence(v_more: bool, n_cheap: int, n_layers: int, n_scan: int, lang: str | None = None) -> str:
    """Chapter 02's own question on this model, in one sentence."""
    if _ko(lang):
        return (f"이 모델에서 02장의 질문: 마지막 3분의 1에서 값 교환은 패턴 교환보다 비용이 "
                f"{'더 크고' if v_more else '더 작고'}, {n_layers}개 층 가운데 {n_cheap}개 층이 홀로 자기 패턴 없이 "
                f"허용 범위 안에 듭니다(시퀀스 {n_scan}개).")
    return (f"Chapter 02's own question, on this model: in the last third the value swap costs "
            f"{'more' if v_more else 'less'} than the pattern swap, and {n_cheap} of {n_layers} "
            f"single layers do without their own pattern within the tolerance ({n_scan} sequences).")


def checks_sentence(failed: list[str], n_out: int, dtype: str, wall_time_s: float, lang: str | None = None) -> str:
    """Which declared checks did not hold, how many claims are therefore out of regime, and the run's time
    against the recipe's 20-minute budget."""
    within = wall_time_s <= 1200
    if _ko(lang):
        names = ", ".join(f"`{n}`" for n in failed)          # code names, as in the Korean verdict table
        return (f"재현되지 않은 점검: {names or '없음'}. 따라서 주장 {n_out}개가 적용 범위 밖입니다(각각 "
                f"가상 판정과 함께 출력하며, 셈에 넣지 않습니다). 저장된 실행({dtype})은 {wall_time_s / 60:.1f}분이 "
                f"걸려, 코어 2개에 대한 레시피의 20분 예산을 {'넘지 않았습니다' if within else '넘었습니다'}.")
    return (f"Checks not reproduced: {', '.join(failed) or 'none'}; so {n_out} claims are out of regime "
            "(each printed with its would-be verdict, not counted). The stored "
            f"run ({dtype}) took {wall_time_s / 60:.1f} min, "
            f"{'within' if within else 'over'} "
            "the recipe's 20-minute budget for 2 cores.")


def substitutions_table(ok: list[dict], n: int = 6, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the ``n`` cheapest substitutions within the tolerance, named in ``lang``."""
    columns = (["대체", "위치", "절약한 바이트 / 토큰", "Δ 손실 [95% 신뢰구간]"] if _ko(lang) else
               ["substitution", "where", "bytes saved / token", "Δ loss [95% CI]"])
    return columns, [[condition_name(r["condition"], lang), where_name(r["where"], lang), f"{r['bytes_saved']:,}",
                      f"{r['mean']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]"]
                     for r in sorted(ok, key=lambda r: r["mean"])[:n]]


def norms_declarations_sentence(sink_eps: float, sesoi_share: float, sesoi_depth: float, n_sequences: int,
                                wall_time_s: float, lang: str | None = None) -> str:
    """What counts as a sink, the smallest effects of interest, and the stored decoder-norms run's size and time."""
    if _ko(lang):
        return (f"싱크: 첫 토큰의 가중치 몫이 {attach(f'{sink_eps:g}', '을/를')} 넘는 것(헤드, 쿼리, 시퀀스에 걸친 평균). 관심 최소 효과: "
                f"몫의 {sesoi_share:g}, 3분의 1 구간 사이 혼합 비율의 {sesoi_depth:g}. 시퀀스 {n_sequences}개; 저장된 "
                f"실행에 {wall_time_s:.0f} s가 걸렸습니다.")
    return (f"A sink: the first token's weight share above {sink_eps:g} (mean over heads, queries and "
            f"sequences). Smallest effects of interest: {sesoi_share:g} of a share, {sesoi_depth:g} of the "
            f"mixing ratio between thirds. {n_sequences} sequences; the stored run took "
            f"{wall_time_s:.0f} s.")


VERDICT_COLUMNS_KO = ("검정", "종류 / 묶음", "평균 [95 % 신뢰구간] (nats)", "비교 대상", "p (Holm)", "판정")


def verdict_columns(columns: tuple[str, ...], lang: str | None = None) -> tuple[str, ...]:
    """The verdict table's columns (``columns``: the English ones, :data:`readout.VERDICT_COLUMNS` or
    :data:`norms_prose.NORMS_VERDICT_COLUMNS`) in ``lang``; the unit of the mean column is kept."""
    if not _ko(lang):
        return columns
    mean = "평균 [95 % 신뢰구간] (몫)" if "(share)" in columns[2] else VERDICT_COLUMNS_KO[2]
    return (*VERDICT_COLUMNS_KO[:2], mean, *VERDICT_COLUMNS_KO[3:])
