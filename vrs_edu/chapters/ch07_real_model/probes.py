"""Chapter 07's measurements on a real pretrained encoder (all-MiniLM-L6-v2 in :class:`~vrs_edu.nn.bert.MiniBert`).

Three kinds of question, each a plain function that returns numbers:

1. **Linear probes** — how much of q, k, v and of the residual stream at each layer is a linear function of the
   token's identity alone? Ridge regression from the context-free word embedding (``embed.token``) to the target,
   fit on a fixed set of sentences, scored by held-out R² on other sentences (:func:`probe_table`). A pilot run
   before the course asked the same with 400 sentences of the Python reference docs: v's R² was 0.95, 0.88, 0.63,
   0.52, 0.53, 0.72 in its six layers in order, against 0.46–0.60 for q and 0.40–0.62 for k.
2. **Chapter 02's experiments** — pattern swap, value swap and frozen routing — scored by the cosine between the
   patched and the clean *sentence embedding* (the model's output; it has no language-model loss).
3. **Chapter 04's substitution ablation** — replace the input of Q, of K or of V at one layer by the context-free x0
   (the embedding layer's output) and score the change the same way.

Why cosine: all-MiniLM-L6-v2 was trained so that the cosine of two sentence embeddings measures their similarity.
1.0 = the intervention changed nothing the model outputs; the cosine between two *different* sentences of the corpus
(printed as a reference by the swap experiments) is what "as if it were another sentence" looks like.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor

from vrs_edu.chapters.ch07_real_model.model import RealModel
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.experiments import RESULTS_DIR
from vrs_edu.lab.metrics import attention_entropy, oversmoothing

PATHS = ("q", "k", "v")
ALPHAS = (1e-5, 1e-3, 1e-2, 1e-1, 1.0)   # ridge strengths, in units of the mean squared singular value of X


# -- 1. ridge probes --------------------------------------------------------------------------------------------

@dataclass
class RidgeProbe:
    """``y ≈ (x - x_mean) @ weight + y_mean``. ``alpha`` is the ridge strength that was used (relative units)."""

    weight: Tensor      # (D_in, D_out), float64
    x_mean: Tensor      # (D_in,)
    y_mean: Tensor      # (D_out,): the training mean, also the R² baseline
    alpha: float

    def predict(self, x: Tensor) -> Tensor:
        """(N, D_in) -> (N, D_out), in float32 (the weights were solved in float64)."""
        return (x.float() - self.x_mean.float()) @ self.weight.float() + self.y_mean.float()


def _check_xy(x: Tensor, y: Tensor) -> None:
    if x.dim() != 2 or y.dim() != 2 or x.size(0) != y.size(0):
        raise ValueError(f"x and y must be (N, D_in) and (N, D_out) with the same N, "
                         f"got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.size(0) < 2:
        raise ValueError(f"need at least 2 samples, got {x.size(0)}")


class RidgeSolver:
    """Ridge regression from fixed inputs x (N, D_in) to any number of targets, with an unpenalised intercept.

    Minimises ``‖y_c − x_c W‖² + λ‖W‖²`` on centred x and y, with ``λ = alpha · mean eigenvalue of x_cᵀx_c`` so that
    ``alpha`` does not depend on the scale of x. The eigen-decomposition of ``x_cᵀx_c`` is computed once, so every
    further target and alpha costs one matrix product: ``W = E diag(1 / (e + λ)) Eᵀ x_cᵀ y_c``. The solve runs
    in float64; the long products ``x_cᵀ y_c`` over N rows in float32, plenty for sums of a few thousand rows.

    Raises:
        ValueError: x not (N, D_in) with N >= 2; (in :meth:`fit`) y with another N, or alpha < 0.
    """

    def __init__(self, x: Tensor):
        if x.dim() != 2 or x.size(0) < 2:
            raise ValueError(f"x must be (N, D_in) with N >= 2, got {tuple(x.shape)}")
        x = x.double()
        self.x_mean = x.mean(0)
        x_c = x - self.x_mean
        self.x_c = x_c.float()
        self.evals, self.evecs = torch.linalg.eigh(x_c.T @ x_c)
        self.evals = self.evals.clamp_min(0.0)   # round-off can make a zero eigenvalue slightly negative

    def fit(self, y: Tensor, alpha: float) -> RidgeProbe:
        return self.fit_alphas(y, (alpha,))[alpha]

    def fit_alphas(self, y: Tensor, alphas) -> dict[float, RidgeProbe]:
        """One probe per alpha for the target y (N, D_out); ``x_cᵀ y_c`` is computed once for all of them."""
        if y.dim() != 2 or y.size(0) != self.x_c.size(0):
            raise ValueError(f"y must be (N={self.x_c.size(0)}, D_out), got {tuple(y.shape)}")
        if any(a < 0 for a in alphas):
            raise ValueError(f"alpha must be >= 0, got {list(alphas)}")
        y_mean = y.double().mean(0)
        xty = (self.x_c.T @ (y.float() - y_mean.float())).double()   # (D_in, D_out)
        proj = self.evecs.T @ xty                                      # ... in the eigenbasis of x_cᵀx_c
        scale = float(self.evals.mean())
        return {a: RidgeProbe(self.evecs @ (proj / (self.evals + a * scale).unsqueeze(1)), self.x_mean, y_mean, a)
                for a in alphas}


def fit_ridge(x: Tensor, y: Tensor, alpha: float = 1e-2) -> RidgeProbe:
    """Ridge regression of y (N, D_out) on x (N, D_in) with an unpenalised intercept (see :class:`RidgeSolver`).

    Raises:
        ValueError: on mismatched shapes, N < 2 or alpha < 0.
    """
    _check_xy(x, y)
    return RidgeSolver(x).fit(y, alpha)


def r2_score(y: Tensor, y_hat: Tensor, baseline: Tensor) -> float:
    """Variance-weighted R² over all output dimensions: ``1 − Σ‖y − ŷ‖² / Σ‖y − baseline‖²``.

    ``baseline`` (D_out,) is the best constant guess; for held-out data we pass the *training* mean, so the score
    says how much better the probe does than knowing nothing about the token. 1 = perfect, 0 = no better than the
    constant, negative = worse than the constant.
    """
    if y.shape != y_hat.shape or baseline.shape != y.shape[-1:]:
        raise ValueError(f"y and y_hat must have the same shape (N, D) and baseline (D,), got {tuple(y.shape)}, "
                         f"{tuple(y_hat.shape)}, {tuple(baseline.shape)}")
    y, y_hat, baseline = y.double(), y_hat.double(), baseline.double()
    return 1.0 - float((y - y_hat).pow(2).sum() / (y - baseline).pow(2).sum())


def per_token_r2(y: Tensor, y_hat: Tensor, baseline: Tensor) -> Tensor:
    """R² of each row on its own: ``1 − ‖y_t − ŷ_t‖² / ‖y_t − baseline‖²`` (N,). The aggregate :func:`r2_score` is
    their average weighted by ``‖y_t − baseline‖²``. Negative when the probe is further off than the constant."""
    if y.shape != y_hat.shape or baseline.shape != y.shape[-1:]:
        raise ValueError(f"y and y_hat must be (N, D) and baseline (D,), got {tuple(y.shape)}, {tuple(y_hat.shape)}, "
                         f"{tuple(baseline.shape)}")
    y, y_hat, baseline = y.double(), y_hat.double(), baseline.double()
    return 1.0 - (y - y_hat).pow(2).sum(-1) / (y - baseline).pow(2).sum(-1)


@dataclass
class ProbeFit:
    probe: RidgeProbe
    r2: float          # held-out R² on the test sentences
    val_r2: dict       # alpha -> R² on the validation sentences (how alpha was chosen)


def split_masks(sentence_index: Tensor, test_every: int = 5) -> tuple[Tensor, Tensor, Tensor]:
    """The fixed split, by sentence (tokens of one sentence never straddle it): sentence i is *test* when
    ``i % test_every == test_every − 1``, *validation* (chooses alpha) when ``i % test_every == test_every − 2``,
    else *train*. Returns boolean masks (train, val, test) over the rows."""
    if test_every < 3:
        raise ValueError(f"test_every must be >= 3 (train, validation and test need sentences), got {test_every}")
    r = sentence_index % test_every
    return r < test_every - 2, r == test_every - 2, r == test_every - 1


def probe_r2(x: Tensor, y: Tensor, train: Tensor, val: Tensor, test: Tensor, alphas=ALPHAS,
             solvers: tuple[RidgeSolver, RidgeSolver] | None = None) -> ProbeFit:
    """Fit ridge on the ``train`` rows for each alpha, keep the alpha with the best validation R², refit on train +
    validation, and report R² on the ``test`` rows (baseline: the fitting rows' mean of y). ``solvers`` (for x[train]
    and x[train | val]) may be passed to reuse their decompositions across targets."""
    _check_xy(x, y)
    fit_rows = train | val
    s_train, s_fit = solvers or (RidgeSolver(x[train]), RidgeSolver(x[fit_rows]))
    scores = {a: r2_score(y[val], p.predict(x[val]), p.y_mean.float())
              for a, p in s_train.fit_alphas(y[train], alphas).items()}
    best = max(scores, key=scores.get)
    p = s_fit.fit(y[fit_rows], best)
    return ProbeFit(p, r2_score(y[test], p.predict(x[test]), p.y_mean.float()), scores)


@dataclass
class Activations:
    """One row per (non-special) token of the probed sentences: its word, sentence, position and the tensors.

    ``features["token"]`` (N, D) is the word-embedding row (token identity only); ``features["x0"]`` the embedding
    layer's output (token + position); ``features["q.3"]``, ``"k.3"``, ``"v.3"`` (N, D) are layer 3's q, k, v with the
    heads concatenated; ``features["resid.l"]`` the stream entering layer l (``resid.L`` = the final state).
    """

    sentences: list[str]
    tokens: list[str]
    sentence_index: Tensor     # (N,) long
    position: Tensor           # (N,) long, position in the tokenized sentence ([CLS] = 0)
    features: dict[str, Tensor] = field(default_factory=dict)
    n_layers: int = 0


@torch.no_grad()
def collect_activations(real: RealModel, sentences: list[str], batch_size: int = 50) -> Activations:
    """Run the model over ``sentences`` (batched by length to save padding) and keep, for every real token that is
    not [CLS] or [SEP], the embedding, x0, q, k, v of every layer and the stream at every depth."""
    if not sentences:
        raise ValueError("sentences is empty")
    L = real.model.cfg.n_layers
    special = {real.tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]")}
    order = sorted(range(len(sentences)), key=lambda i: real.n_tokens(sentences[i]))
    rows: dict[str, list[Tensor]] = defaultdict(list)
    toks, sent_idx, pos = [], [], []
    for b in range(0, len(order), batch_size):
        idx = order[b:b + batch_size]
        ids, mask = real.encode([sentences[i] for i in idx])
        tr = real.model(ids, mask, trace=True).trace
        keep = mask & ~torch.isin(ids, torch.tensor(sorted(special)))          # (B, T)
        merge = lambda t: t.transpose(1, 2).flatten(2)                         # (B, H, T, Dh) -> (B, T, D)  # noqa: E731
        rows["token"].append(tr["embed.token"][keep])
        rows["x0"].append(tr["x0"][keep])
        for l in range(L):
            for s in PATHS:
                rows[f"{s}.{l}"].append(merge(tr[f"blocks.{l}.attn.{s}"])[keep])
        for l, h in enumerate(tr.stack("resid")):
            rows[f"resid.{l}"].append(h[keep])
        for j, i in enumerate(idx):
            t = torch.nonzero(keep[j]).flatten()
            sent_idx += [i] * len(t)
            pos += t.tolist()
            all_tokens = real.tokenizer.id_to_token
            toks += [all_tokens(int(ids[j, p])) for p in t]
    return Activations(list(sentences), toks, torch.tensor(sent_idx), torch.tensor(pos),
                       {k: torch.cat(v) for k, v in rows.items()}, L)


def probe_table(acts: Activations, features: str = "token", test_every: int = 5,
                targets: tuple[str, ...] = ("q", "k", "v", "resid")) -> dict:
    """Held-out R² of q, k, v (per layer) and of the stream (per depth 0..L) from ``acts.features[features]``.

    Returns ``{"q": [L], "k": [L], "v": [L], "resid": [L+1], "alpha": {name: chosen alpha}, "probes": {name:
    RidgeProbe}, "n_train": .., "n_test": ..}`` (tokens); only the ``targets`` asked for are filled.
    Raises ValueError for an unknown feature or target name.
    """
    if not set(targets) <= {"q", "k", "v", "resid"} or not targets:
        raise ValueError(f"targets must be a non-empty subset of ('q', 'k', 'v', 'resid'), got {targets!r}")
    if features not in acts.features or "." in features:
        raise ValueError(f"features must be one of {sorted(k for k in acts.features if '.' not in k)}, "
                         f"got {features!r}")
    train, val, test = split_masks(acts.sentence_index, test_every)
    x = acts.features[features]
    out: dict = {"q": [], "k": [], "v": [], "resid": [], "alpha": {}, "probes": {},
                 "n_train": int((train | val).sum()), "n_test": int(test.sum()), "features": features}
    names = [f"{s}.{l}" for l in range(acts.n_layers) for s in PATHS if s in targets]
    names += [f"resid.{l}" for l in range(acts.n_layers + 1)] if "resid" in targets else []
    solvers = (RidgeSolver(x[train]), RidgeSolver(x[train | val]))   # one decomposition serves every target
    for name in names:
        fit = probe_r2(x, acts.features[name], train, val, test, solvers=solvers)
        out[name.split(".")[0]].append(fit.r2)
        out["alpha"][name] = fit.probe.alpha
        out["probes"][name] = fit.probe
    return out


def token_identity_scores(real: RealModel, probes: dict[str, RidgeProbe], sentence: str, layer: int,
                          paths=PATHS) -> tuple[list[str], dict[str, list[float]]]:
    """The widget's numbers: for one sentence and layer, per token (without [CLS]/[SEP]), the per-token R² of its q,
    k and v from its token identity (probes from :func:`probe_table`, i.e. fit on *other* sentences).

    Raises:
        ValueError: a layer outside 0..L-1, or no probe for one of the paths at that layer.
    """
    L = real.model.cfg.n_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer must be in 0..{L - 1}, got {layer}")
    missing = [f"{s}.{layer}" for s in paths if f"{s}.{layer}" not in probes]
    if missing:
        raise ValueError(f"no probes for {missing}: pass probe_table(...)['probes']")
    acts = collect_activations(real, [sentence])
    scores = {}
    for s in paths:
        p = probes[f"{s}.{layer}"]
        y = acts.features[f"{s}.{layer}"]
        scores[s] = per_token_r2(y, p.predict(acts.features["token"]), p.y_mean.float()).tolist()
    return acts.tokens, scores


# -- 2. chapter 02's experiments, and 3. the substitution ablation ----------------------------------------------

def cosine(a: Tensor, b: Tensor) -> Tensor:
    """Cosine of two batches of sentence embeddings (B, D) -> (B,). MiniBert's embeddings are unit vectors."""
    return torch.nn.functional.cosine_similarity(a, b, dim=-1)


def length_groups(real: RealModel, sentences: list[str]) -> list[list[str]]:
    """Sentences grouped by token count, groups of at least two (a swap needs a partner of the same length, so
    patterns (T, T) and values (T, Dh) fit without padding), in order of length."""
    by_len: dict[int, list[str]] = defaultdict(list)
    for s in sentences:
        by_len[real.n_tokens(s)].append(s)
    return [g for _, g in sorted(by_len.items()) if len(g) >= 2]


@torch.no_grad()
def encoder_swap(real: RealModel, sentences: list[str], what: str) -> dict:
    """Chapter 02's (a) pattern swap / (b) value swap on the real model. Within each group of equal-length sentences,
    sentence A borrows from its neighbour B (the group rolled by one) at one layer: B's attention pattern
    (``what="pattern"``: A keeps its own values) or B's values (``what="value"``: A keeps its own pattern).

    Returns ``{"cos": [mean cosine(patched A, clean A) per layer], "reference": mean cosine(clean A, clean B),
    "n": number of sentences}``. Raises ValueError for another ``what`` or when no two sentences share a length.
    """
    hook_name = {"pattern": "attn.pattern", "value": "attn.v"}.get(what)
    if hook_name is None:
        raise ValueError(f"what must be 'pattern' or 'value', got {what!r}")
    groups = length_groups(real, sentences)
    if not groups:
        raise ValueError("no two sentences have the same token count: pass more sentences")
    L = real.model.cfg.n_layers
    sums, ref, n = [0.0] * L, 0.0, 0
    for g in groups:
        ids, mask = real.encode(g)
        clean = real.model(ids, mask, trace=True)
        other = lambda t: t.roll(1, dims=0)                                      # noqa: E731 - B = A's neighbour
        ref += float(cosine(clean.embedding, other(clean.embedding)).sum())
        for l in range(L):
            donor = other(clean.trace[f"blocks.{l}.{hook_name}"])
            out = real.model.resume(clean.trace[f"blocks.{l}.resid_pre"], mask, l,
                                    hooks={f"blocks.{l}.{hook_name}": lambda t, d=donor: d})
            sums[l] += float(cosine(out.embedding, clean.embedding).sum())
        n += len(g)
    return {"cos": [s / n for s in sums], "reference": ref / n, "n": n}


def _batches(real: RealModel, sentences: list[str], batch_size: int):
    order = sorted(sentences, key=real.n_tokens)
    for b in range(0, len(order), batch_size):
        yield real.encode(order[b:b + batch_size])


@torch.no_grad()
def encoder_frozen_routing(real: RealModel, sentences: list[str], mode: str = "uniform",
                           batch_size: int = 32) -> dict:
    """Chapter 02's (c): replace one layer's freshly computed attention pattern by a fixed one and measure the
    cosine of the sentence embedding to the clean one. ``mode="uniform"``: every query spreads its attention evenly
    over the sentence's real tokens; ``"previous"``: the pattern the layer below computed on the same input (layer 0
    has none: NaN). Returns ``{"cos": [per layer], "n": sentences}``."""
    if mode not in ("uniform", "previous"):
        raise ValueError(f"mode must be 'uniform' or 'previous', got {mode!r}")
    L = real.model.cfg.n_layers
    sums, n = [0.0] * L, 0
    for ids, mask in _batches(real, sentences, batch_size):
        clean = real.model(ids, mask, trace=True)
        uniform = (mask.float() / mask.sum(1, keepdim=True))[:, None, None, :]           # (B, 1, 1, T)
        for l in range(L):
            if mode == "previous" and l == 0:
                sums[l] = float("nan")
                continue
            p = clean.trace[f"blocks.{l}.attn.pattern"]
            fixed = uniform.expand_as(p) if mode == "uniform" else clean.trace[f"blocks.{l - 1}.attn.pattern"]
            out = real.model.resume(clean.trace[f"blocks.{l}.resid_pre"], mask, l,
                                    hooks={f"blocks.{l}.attn.pattern": lambda t, f=fixed: f.contiguous()})
            sums[l] += float(cosine(out.embedding, clean.embedding).sum())
        n += ids.size(0)
    return {"cos": [s / n for s in sums], "n": n}


@torch.no_grad()
def encoder_substitution_ablation(real: RealModel, sentences: list[str], batch_size: int = 32) -> dict:
    """Chapter 04's context-free substitution ablation on the real model: at layer l, the input of Q (or K, or V)
    — normally the stream h_l — is replaced by x0 = LayerNorm(token + position embedding), the stream at depth 0,
    which holds no context. The other two projections keep reading h_l.

    A path that needs only the token (and its position) tolerates the swap (cosine stays near 1); a path that needs
    what earlier layers gathered from the context does not. At layer 0 the input *is* x0, so the cosine is exactly 1
    there: a built-in check. Returns ``{"q": [cos per layer], "k": [...], "v": [...], "n": sentences}``.
    """
    L = real.model.cfg.n_layers
    sums = {s: [0.0] * L for s in PATHS}
    n = 0
    for ids, mask in _batches(real, sentences, batch_size):
        clean = real.model(ids, mask, trace=True)
        x0 = clean.trace["x0"]
        for l in range(L):
            for s in PATHS:
                out = real.model.resume(clean.trace[f"blocks.{l}.resid_pre"], mask, l,
                                        hooks={f"blocks.{l}.attn.{s}_in": lambda t: x0})
                sums[s][l] += float(cosine(out.embedding, clean.embedding).sum())
        n += ids.size(0)
    return {**{s: [v / n for v in sums[s]] for s in PATHS}, "n": n}


@torch.no_grad()
def substitution_cosine(model, ids: Tensor, mask: Tensor, layer: int, path: str) -> float:
    """One cell of :func:`encoder_substitution_ablation`, by two whole forward passes of a
    :class:`~vrs_edu.nn.bert.MiniBert`:
    ids, mask (B, T) -> the mean over the B sentences of cos(patched, clean sentence embedding), where the patched
    run gives the ``path`` projection (``"q"``, ``"k"`` or ``"v"``) of layer ``layer`` the context-free x0 (hook
    ``x0``) as its input, at hook point ``blocks.{layer}.attn.{path}_in``. Chapter 07's exercise 3.

    Raises ValueError for a path other than q, k, v or a layer outside 0..L-1.
    """
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"layer must be in 0..{model.cfg.n_layers - 1}, got {layer}")
    clean = model(ids, mask, trace=True)
    x0 = clean.trace["x0"]
    patched = model(ids, mask, hooks={f"blocks.{layer}.attn.{path}_in": lambda t: x0})
    return float(cosine(patched.embedding, clean.embedding).mean())


@torch.no_grad()
def layer_statistics(real: RealModel, sentences: list[str]) -> dict:
    """Chapter 03's per-layer measurements on the real model, on unpadded equal-length groups: attention entropy of
    token importance (nats, :func:`~vrs_edu.lab.metrics.attention_entropy`) per layer, and over-smoothing (mean
    pairwise cosine of the token states, :func:`~vrs_edu.lab.metrics.oversmoothing`) per depth 0..L. Entropy is
    also given relative to its maximum log T, since sentences differ in length."""
    L = real.model.cfg.n_layers
    ent, rel, smooth, n = [0.0] * L, [0.0] * L, [0.0] * (L + 1), 0
    by_len: dict[int, list[str]] = defaultdict(list)
    for s in sentences:
        by_len[real.n_tokens(s)].append(s)
    for T, g in sorted(by_len.items()):
        tr = real.run(g, trace=True).trace
        for l, p in enumerate(tr.layers("attn.pattern")):
            e = attention_entropy(p)                                             # (B,)
            ent[l] += float(e.sum())
            rel[l] += float(e.sum()) / math.log(T)
        for l, h in enumerate(tr.stack("resid")):
            smooth[l] += oversmoothing(h) * len(g)
        n += len(g)
    return {"entropy": [e / n for e in ent], "entropy_rel": [r / n for r in rel],
            "oversmoothing": [s / n for s in smooth], "n": n}


# -- the toy models' answers, from the result files of chapters 02-05 -------------------------------------------

def toy_results(results_dir: str | Path | None = None) -> dict[str, dict]:
    """Every result file under ``data/results`` written by ``vrs-edu reproduce`` (a full run preferred over its
    ``--quick`` version), by recipe name. Empty when none has been made yet."""
    folder = Path(results_dir or RESULTS_DIR)
    found: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict) or "recipe" not in data:
            continue
        name = data["recipe"]
        if name in found and data.get("quick") and not found[name].get("quick"):
            continue
        found[name] = data
    return found


def _mean_defined(xs) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else float("nan")


def _variant_runs(data: dict, where: str = "", depth: int = 0):
    """Yield ``(where, variant, runs)`` for every ``{"runs": {variant: [run, ...]}}`` in a result file, at any nesting
    (a recipe may hold one part per data set, e.g. ``corpus`` and ``recall``)."""
    runs = data.get("runs")
    if isinstance(runs, dict):
        for variant, rs in runs.items():
            if isinstance(rs, list) and rs and all(isinstance(r, dict) for r in rs):
                yield where, variant, rs
    if depth < 3:
        for key, value in data.items():
            if key != "runs" and isinstance(value, dict):
                yield from _variant_runs(value, f"{where}/{key}" if where else key, depth + 1)


def _row(name: str, data: dict, where: str, variant: str, **values) -> dict:
    return {"recipe": name, "part": where, "variant": variant,
            "command": data.get("command", f"vrs-edu reproduce {name}"), "wall_time_s": data.get("wall_time_s"),
            **values}


def toy_ablations(results: dict[str, dict]) -> list[dict]:
    """Substitution-ablation rows from the toy result files: per recipe and variant, the loss change (nats,
    ablated − clean) when Q, K or V reads x0, averaged over seeds, per layer and over the last third of layers."""
    rows = []
    for name, data in results.items():
        for where, variant, rs in _variant_runs(data):
            abl = [r["ablation"] for r in rs if isinstance(r.get("ablation"), dict)]
            if not abl or not all(s in abl[0] for s in PATHS):
                continue
            n_layers = len(abl[0]["q"])
            per_layer = {s: [_mean_defined(a[s][l] for a in abl) for l in range(n_layers)] for s in PATHS}
            deep = range(n_layers - max(1, n_layers // 3), n_layers)
            rows.append(_row(name, data, where, variant, seeds=len(abl), per_layer=per_layer,
                             deep={s: _mean_defined(per_layer[s][l] for l in deep) for s in PATHS}))
    return rows


def toy_x0_coefficients(results: dict[str, dict]) -> list[dict]:
    """x0 coefficient rows: chapter 04's x0 share ``|β| / (|α| + |β|)`` of Q, K and V, averaged over seeds and
    layers.

    The share is scale-free (under QK-norm only the ratio of α and β matters) and bounded, where ``β/α`` blows up as
    α nears 0; unsigned as in chapter 04, since a negative β reads x0 as much as a positive one (the sign only flips
    the direction it is read in). Rows: ``x0_share = {"q": ..., "k": ..., "v": ...}``, 0 = the path reads only the
    stream, 1 = only x0.
    """
    rows = []
    for name, data in results.items():
        for where, variant, rs in _variant_runs(data):
            shares = {s: [] for s in PATHS}
            for r in rs:
                c = r.get("coefficients") or {}
                for key, beta in c.items():
                    for s in PATHS:
                        if key.endswith(f"x0.beta_{s}") and isinstance(beta, (int, float)):
                            alpha = c.get(key.replace("beta_", "alpha_"))
                            if isinstance(alpha, (int, float)) and abs(alpha) + abs(beta) > 0:
                                shares[s].append(abs(beta) / (abs(alpha) + abs(beta)))
            if any(shares.values()):
                rows.append(_row(name, data, where, variant, seeds=len(rs),
                                 x0_share={s: _mean_defined(shares[s]) for s in PATHS}))
    return rows


def toy_layer_statistics(results: dict[str, dict]) -> list[dict]:
    """Per-layer attention entropy and over-smoothing of every toy variant (chapter 03's measurements), seed-mean."""
    rows = []
    for name, data in results.items():
        for where, variant, rs in _variant_runs(data):
            lm = [r["layer_metrics"] for r in rs if isinstance(r.get("layer_metrics"), dict)]
            if not lm or "entropy" not in lm[0] or "oversmoothing" not in lm[0]:
                continue
            rows.append(_row(name, data, where, variant, seeds=len(lm),
                             **{k: [_mean_defined(m[k][l] for m in lm) for l in range(len(lm[0][k]))]
                                for k in ("entropy", "oversmoothing")}))
    return rows


def sentence_low(real, probes: dict, sentence: str) -> float:
    """The lowest per-token R² of ``sentence`` over every layer and path: one y-axis for all its layers."""
    return min(min(v) for l in range(real.model.cfg.n_layers)
               for v in token_identity_scores(real, probes, sentence, l)[1].values())


def identity_summary(scores: dict[str, list[float]], lang: str | None = None) -> str:
    """One line: the mean per-token R² of q, k and v, and how many tokens have v explained better than both q and k.
    In ``lang`` (``None``: the running notebook's edition)."""
    v_best = sum(v > max(q, k) for q, k, v in zip(scores["q"], scores["k"], scores["v"]))
    means = ", ".join(f"{s} {sum(scores[s]) / len(scores[s]):.3f}" for s in PATHS)
    if resolve_language(lang) == "ko":
        return f"토큰별 R² 평균: {means}; v가 가장 잘 설명되는 토큰은 {len(scores['v'])}개 가운데 {v_best}개"
    return f"mean per-token R²: {means}; v best explained in {v_best} of {len(scores['v'])} tokens"


TREND_KO = {"rises": "상승", "falls": "하락", "flat": "평탄"}


def trend(xs, lang: str = "en") -> str:
    """``"rises"``, ``"falls"`` or ``"flat"`` (Korean ``"상승"``, ``"하락"``, ``"평탄"`` for ``lang="ko"``): the last
    value of a curve against its first."""
    word = "rises" if xs[-1] > xs[0] else "falls" if xs[-1] < xs[0] else "flat"
    return TREND_KO[word] if resolve_language(lang) == "ko" else word


def curve_row(name: str, stats: dict, lang: str | None = None) -> list[str]:
    """One row of chapter 07's concentration table: a model's attention entropy (first → last layer) and
    over-smoothing (depth 0 → its maximum, at which depth → the last), each with its direction, in ``lang``
    (``None``: the running notebook's edition)."""
    lang = resolve_language(lang)
    e, o = stats["entropy"], stats["oversmoothing"]
    top = max(range(len(o)), key=o.__getitem__)
    depth = "깊이" if lang == "ko" else "depth"
    return [name, f"{e[0]:.2f} → {e[-1]:.2f} ({trend(e, lang)})",
            f"{o[0]:.2f} → {o[top]:.2f} ({depth} {top}) → {o[-1]:.2f} ({trend(o, lang)})"]
