"""``vrs-edu reproduce decoder-kv-designs``: could SmolLM2-135M have used K = V, or one KV cache for two adjacent
layers? Two designs of recent decoders asked post hoc of trained weights (inference only, nothing is trained).

**K = V.** Gemma 4's global attention layers have no value projection: the key projection's output serves as the
value (``attention_k_eq_v`` in Hugging Face's Gemma 4 code). Asked of a model trained with both: for each layer l and
each KV head, a map V ≈ K·A + b is fitted by least squares with a small ridge (:data:`RIDGE`) on the calibration
split's tokens. Per KV head because a per-head map folds into the model: A into that head's output rows (A·W_O^h for
each query head h of the group) and b into a constant output bias (attention weights sum to 1), so the mapped layer
*is* a K = V layer with no more weights. A map over the concatenated KV width mixes heads and folds into nothing; its
R² is stored as a description only (``r2["k_concat"]``). K is taken **before RoPE**: after RoPE, k_t is rotated by an
angle that depends on its position t, so no one linear map reads V from it (Gemma 4 too takes V before the rotation).
Read on the evaluation split: R², the share of V's variance (about its evaluation mean) the map explains, per layer
(the KV heads' residuals pooled), and the loss change in nats (next-token cross-entropy) when V := K·A + b at one
layer, and at every layer of the last third at once. Two controls say what "small" is: V := its calibration mean
(the map with nothing to read: what the layer's V is worth at all) and V := a map fitted the same way from a random
projection of the layer's input of the same width (``norm_l(x)·P``, P Gaussian: is K special, or would any view of the
input that wide do?). K and V are both linear in ``norm_l(x)``, so R² measures how much of V lies in what K keeps.

**Cross-layer KV sharing** (CLA, Brandon et al., arXiv 2405.12981; Gemma 4's ``num_kv_shared_layers``; post hoc,
MiniCache, Liu et al., arXiv 2405.14366, reports the KV states of adjacent middle-to-deep layers highly similar). For
each adjacent pair (l, l+1): the mean per-token cosine of the same token's K (and V) in the two layers, per KV head
(what sharing literally reuses; RoPE rotates both layers' keys at one position by the same angle, so the cosine is
the same before or after it), and linear CKA (Kornblith et al., arXiv 1905.00414) on the concatenated KV width:
similarity up to a rotation and a scale of the coordinates (a high CKA with a low cosine: the same information in
other coordinates, which sharing cannot use without a map); and the loss change when layer l+1 attends over layer
l's K (after RoPE, as the cache holds it) and V, one pair at a time, and in CLA's factor-2 layout over the last third
(layers 21, 23, ..., 29 read 20, 22, ..., 28).

The unit of replication is the evaluation sequence (chapter 08's windows of 128 tokens): the losses on
``loss_sequences`` of them, each condition paired with the same sequence's clean loss; the descriptions (R², cosine,
CKA) on ``describe_sequences``. The tests are declared below, before the run. Float32 throughout. Shapes: B batch,
T sequence, D width, L layers, Hkv KV heads, Dh head width, W = Hkv·Dh the KV width, N tokens.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor

from vrs_edu.chapters.ch08_real_decoder.interventions import Condition, paired_losses, run_layers
from vrs_edu.chapters.ch08_real_decoder.model import (GGUF_SHA256, MODEL_NAME, Windows, load_decoder, make_windows,
                                                      thirds)
from vrs_edu.chapters.ch08_real_decoder.recipe import SESOI, TOLERANCE, subset
from vrs_edu.lab.analysis import DeclaredTest, Precondition, judge, verdict_records
from vrs_edu.lab.corpora import DEFAULT_NAME, named_corpus
from vrs_edu.lab.experiments import Recipe
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.progress import progress_bar
from vrs_edu.lab.results import Verdict
from vrs_edu.nn.llama import MiniLlama

NAME = "decoder-kv-designs"
# -- declared before the full run -------------------------------------------------------------------------------
RIDGE = 1e-3            # λ = RIDGE · the map's inputs' mean variance: shrinks a direction only where K barely varies
LOSS_SANE = 4.5         # nats; chapter 08's full run measured 3.11 on 219 windows (uniform over 49,152 tokens: 10.8)
MIN_TOKENS_PER_COEF = 20.0   # calibration tokens per coefficient of one output column of a per-head map (Dh + 1)
SESOI_COS = 0.05        # cosine units: the smallest difference of similarity between two thirds worth a sentence
SETTINGS = {"seq_len": 128, "n_eval": 224, "calib_per_eval": 3, "min_eval": 200, "calib_windows": 32,
            "describe_sequences": 32, "loss_sequences": 8, "batch_size": 8, "ridge": RIDGE, "dtype": "float32"}
QUICK = {**SETTINGS, "seq_len": 16, "n_eval": 8, "min_eval": 4, "calib_windows": 8, "describe_sequences": 4,
         "loss_sequences": 3, "batch_size": 3}   # for tests: every field, no reading (128 calibration tokens)
SOURCES = ("k", "random")   # what a fitted map reads: the layer's K before RoPE, or norm_l(x)·P
_TOL_SRC = ("declared: within ±0.05 nats (+5 % perplexity), chapter 08's tolerance (real-decoder); an equivalence "
            "test (TOST)")
_DIFF_SRC = "declared: 0.05 nats per token (+5 % perplexity), chapter 08's smallest difference of interest"
_COS_SRC = "declared: 0.05 of the per-token cosine (a twentieth of the range from orthogonal to identical)"
_POST_HOC = "asked post hoc of a model trained with separate K and V"

CLEAN_LOSS = Precondition("clean_loss_sane", "the unmodified model reads the evaluation text (the premise of every "
                          "comparison)", "the model's mean next-token loss on the loss sequences, nats", "negative",
                          LOSS_SANE)
FIT = Precondition("fit_overdetermined", "each map is fitted on many more tokens than it has coefficients (a map "
                   "fitted to noise predicts held-out V worse and would make K = V look dearer than it is)",
                   "calibration tokens per coefficient of one output column of a per-head map (Dh + 1)", "positive",
                   MIN_TOKENS_PER_COEF)


def _free(name: str, claim: str, quantity: str, family: str, requires: tuple[str, ...]) -> DeclaredTest:
    return DeclaredTest(name, claim, quantity, "within ±0.05 nats", "negative", 0.0, family, -TOLERANCE, _TOL_SRC,
                        form="equivalence", requires=requires)


def declared(n_layers: int) -> tuple[list[DeclaredTest], list[Precondition]]:
    """The declared tests and preconditions for a decoder of ``n_layers`` (30: SmolLM2-135M)."""
    fit = ("clean_loss_sane", "fit_overdetermined")
    k_eq_v = f"V can be read from the layer's own K by a per-head linear map (Gemma 4's K = V; {_POST_HOC})"
    tests = [_free(f"v_from_k_free_{l}", k_eq_v, f"per sequence: Δ loss, layer {l}'s V := K·A + b", "k_eq_v", fit)
             for l in range(n_layers)]
    tests += [
        _free("late_v_from_k_free", k_eq_v, "per sequence: Δ loss, every last-third layer's V := K·A + b at once",
              "k_eq_v", fit),
        DeclaredTest("late_v_from_k_beats_mean", "K carries what the last third's V carries beyond a constant",
                     "per sequence: Δ loss(V := K·A + b) − Δ loss(V := its mean), last third at once",
                     "the same sequence", "negative", 0.0, "k_eq_v_controls", -SESOI, _DIFF_SRC, requires=fit),
        DeclaredTest("late_v_from_k_beats_random", "K is a better source of V than a random view of the layer's "
                     "input of the same width", "per sequence: Δ loss(V := K·A + b) − Δ loss(V := (norm(x)·P)·A' + "
                     "b'), last third at once", "the same sequence", "negative", 0.0, "k_eq_v_controls", -SESOI,
                     _DIFF_SRC, requires=fit),
    ]
    share = f"adjacent layers can share one KV cache (CLA, arXiv 2405.12981; {_POST_HOC} per layer)"
    tests += [_free(f"shared_kv_free_{l}", share, f"per sequence: Δ loss, layer {l + 1} attends over layer {l}'s K "
                    "and V", "sharing", ("clean_loss_sane",)) for l in range(n_layers - 1)]
    tests.append(_free("late_shared_kv_free", share, "per sequence: Δ loss, the last third's odd layers attend over "
                       "the K and V of the layer before (CLA's factor 2)", "sharing", ("clean_loss_sane",)))
    tests += [DeclaredTest(
        f"late_adjacent_{p}_more_similar", f"the {p.upper()} of adjacent layers is more alike deep than shallow "
        "(MiniCache, arXiv 2405.14366: highly similar from the middle of the depth on)", f"per sequence: mean "
        f"per-token cosine of {p.upper()} between adjacent layers, late-third pairs − early-third pairs",
        "the same sequence", "positive", 0.0, "minicache", SESOI_COS, _COS_SRC, requires=("clean_loss_sane",))
        for p in ("k", "v")]
    return tests, [CLEAN_LOSS, FIT]


# -- the instruments --------------------------------------------------------------------------------------------

class Moments:
    """Running sums over tokens of z (N, F) in float64: the count, Σz (F,) and Σ z zᵀ (F, F): all a least-squares
    map between two blocks of z's columns, or a linear CKA between them, needs (the tokens themselves are not kept)."""

    def __init__(self, width: int):
        self.n = 0
        self.sum = torch.zeros(width, dtype=torch.float64)
        self.outer = torch.zeros(width, width, dtype=torch.float64)

    def add(self, z: Float[Tensor, "N F"]) -> None:
        z = z.double()
        self.n += len(z)
        self.sum += z.sum(0)
        self.outer += z.T @ z

    def mean(self) -> Float[Tensor, "F"]:
        return self.sum / self.n

    def scatter(self) -> Float[Tensor, "F F"]:
        """Σ (z − z̄)(z − z̄)ᵀ, the centred cross-products."""
        m = self.mean()
        return self.outer - self.n * torch.outer(m, m)


def ridge_map(m: Moments, x: slice, y: slice, ridge: float = RIDGE) -> tuple[Tensor, Tensor]:
    """The least-squares map ŷ = x·A + b between the column blocks ``x`` and ``y`` of the tokens summed in ``m``:
    A = (C_xx + λI)⁻¹ C_xy, b = ȳ − x̄·A, with C the centred cross-products and λ = ``ridge`` · tr(C_xx) / d_x (relative
    to the inputs' mean variance, so one ``ridge`` shrinks alike at every layer; the intercept is not shrunk; 0: plain
    least squares). Returns A (d_x, d_y) and b (d_y,) in float32."""
    c, mu = m.scatter(), m.mean()
    cxx, cxy = c[x, x], c[x, y]
    lam = ridge * torch.trace(cxx) / cxx.size(0)
    a = torch.linalg.solve(cxx + lam * torch.eye(cxx.size(0), dtype=cxx.dtype), cxy)
    return a.float(), (mu[y] - mu[x] @ a).float()


class Explained:
    """R² of predictions ŷ of y (B, H, T, Dh), accumulated over batches, per head h: 1 − Σ‖y − ŷ‖² / Σ‖y − ȳ‖², ȳ the
    mean of every y added (the evaluation split's own mean, so a constant prediction scores ≤ 0)."""

    def __init__(self):
        self.n, self.sse, self.sum, self.sq = 0, 0.0, 0.0, 0.0

    def add(self, y: Float[Tensor, "B H T Dh"], y_hat: Float[Tensor, "B H T Dh"]) -> None:
        y, y_hat = y.double(), y_hat.double()
        self.n += y.size(0) * y.size(2)
        self.sse = self.sse + (y - y_hat).pow(2).sum(dim=(0, 2, 3))      # (H,)
        self.sum = self.sum + y.sum(dim=(0, 2))                          # (H, Dh)
        self.sq = self.sq + y.pow(2).sum(dim=(0, 2, 3))                  # (H,)

    def sst(self) -> Float[Tensor, "H"]:
        return self.sq - self.sum.pow(2).sum(-1) / self.n

    def per_head(self) -> list[float]:
        return (1 - self.sse / self.sst()).tolist()

    def pooled(self) -> float:
        """R² of the heads together (their residuals and variances summed)."""
        return float(1 - self.sse.sum() / self.sst().sum())


def linear_cka(m: Moments, width: int) -> float:
    """Linear CKA (Kornblith et al., arXiv 1905.00414) between the first ``width`` columns (x) of the tokens summed
    in ``m`` and the rest (y): ‖C_xy‖²_F / (‖C_xx‖_F ‖C_yy‖_F), C the centred cross-products. 1 when y = s·x·Q for an
    orthogonal Q and s > 0; unchanged by such maps, not by every invertible linear map."""
    c = m.scatter()
    cxx, cyy, cxy = c[:width, :width], c[width:, width:], c[:width, width:]
    return float(cxy.pow(2).sum() / (torch.linalg.matrix_norm(cxx) * torch.linalg.matrix_norm(cyy)))


def token_cosine(a: Float[Tensor, "B H T Dh"], b: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "B"]:
    """Per sequence, the mean over heads and positions of cos(a[b, h, t], b[b, h, t]): the same token's vectors in
    two layers, uncentred (a shared cache reuses them as they are)."""
    return F.cosine_similarity(a.double(), b.double(), dim=-1).mean(dim=(1, 2))


def _flat(t: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "N W"]:
    return rearrange(t, "b h t d -> (b t) (h d)")


def kv_points(model: MiniLlama, x: Int[Tensor, "B T"]) -> dict[str, Tensor]:
    """K before RoPE (``blocks.{l}.attn.k_pre``, (B, Hkv, T, Dh)), V (``…attn.v``) and the normalised input the
    projections read (``…attn.v_in``, (B, T, D)) of every layer, from one pass of the layers (no head)."""
    got: dict[str, Tensor] = {}
    names = [f"blocks.{l}.attn.{p}" for l in range(model.cfg.n_layers) for p in ("k_pre", "v", "v_in")]
    run_layers(model, x, model.cfg.n_layers, {n: partial(_keep, got, n) for n in names})
    return got


def _keep(store: dict, key, t: Tensor) -> Tensor:
    store[key] = t
    return t


@dataclass
class KVMaps:
    """Every layer's fitted maps to V: ``a[src]`` (L, Hkv, Dh, Dh) and ``b[src]`` (L, Hkv, Dh) per KV head, for src
    "k" (from the layer's K before RoPE) and "random" (from ``norm_l(x)·proj[l]``); ``mean`` (L, Hkv, Dh), V's
    calibration mean; ``proj`` (L, D, W), the random projections P (entries N(0, 1/D)); ``concat_a`` (L, W, W) and
    ``concat_b`` (L, W), the map from K over the concatenated width (a description); ``tokens``, the calibration
    tokens they were fitted on."""

    a: dict[str, Tensor]
    b: dict[str, Tensor]
    mean: Tensor
    proj: Tensor
    concat_a: Tensor
    concat_b: Tensor
    tokens: int

    def source(self, src: str, layer: int, k: Tensor, h: Tensor) -> Float[Tensor, "B Hkv T Dh"]:
        """What map ``src`` reads at ``layer``: "k", K itself (B, Hkv, T, Dh); "random", the input h (B, T, D) seen
        through the random projection, split into heads as K is."""
        if src == "k":
            return k
        return rearrange(h @ self.proj[layer].to(h.dtype), "b t (h d) -> b h t d", h=k.size(1))

    def predict(self, src: str, layer: int, z: Tensor) -> Float[Tensor, "B Hkv T Dh"]:
        """V as map ``src`` ("k" or "random") predicts it at ``layer`` from its source z (B, Hkv, T, Dh)."""
        return (torch.einsum("bhtd,hde->bhte", z, self.a[src][layer].to(z.dtype))
                + self.b[src][layer][None, :, None, :].to(z.dtype))

    def mean_v(self, layer: int, like: Tensor) -> Float[Tensor, "B Hkv T Dh"]:
        """V's calibration mean at ``layer`` at every position of ``like`` (B, Hkv, T, Dh)."""
        return self.mean[layer][None, :, None, :].to(like.dtype).expand_as(like)

    def predict_concat(self, layer: int, k: Tensor) -> Float[Tensor, "B Hkv T Dh"]:
        v = rearrange(k, "b h t d -> b t (h d)") @ self.concat_a[layer].to(k.dtype) + self.concat_b[layer].to(k.dtype)
        return rearrange(v, "b t (h d) -> b h t d", h=k.size(1))


@torch.no_grad()
def fit_maps(model: MiniLlama, windows: Int[Tensor, "N T1"], *, batch_size: int = 8, ridge: float = RIDGE,
             seed: int = 0, progress=None) -> KVMaps:
    """Fit every layer's maps (:class:`KVMaps`) on the inputs of the calibration ``windows`` (all but each window's
    last token): per token the row [K | norm_l(x)·P | V] (3W wide) is summed into one :class:`Moments` per layer, then
    each map is :func:`ridge_map` between its blocks. ``seed`` draws the random projections."""
    cfg = model.cfg
    L, Hkv, Dh = cfg.n_layers, cfg.n_kv_heads, cfg.head_dim
    W = Hkv * Dh
    proj = torch.randn(L, cfg.d_model, W, generator=torch.Generator().manual_seed(seed)) / math.sqrt(cfg.d_model)
    moments = [Moments(3 * W) for _ in range(L)]
    for w in windows.split(batch_size):
        pts = kv_points(model, w[:, :-1])
        for l in range(L):
            k, v, h = (pts[f"blocks.{l}.attn.{p}"] for p in ("k_pre", "v", "v_in"))
            moments[l].add(torch.cat([_flat(k), (h @ proj[l].to(h.dtype)).flatten(0, 1), _flat(v)], dim=-1))
        if progress is not None:
            progress(len(w))
    a = {s: torch.zeros(L, Hkv, Dh, Dh) for s in SOURCES}
    b = {s: torch.zeros(L, Hkv, Dh) for s in SOURCES}
    concat_a, concat_b = torch.zeros(L, W, W), torch.zeros(L, W)
    for l, m in enumerate(moments):
        for h in range(Hkv):
            v_cols = slice(2 * W + h * Dh, 2 * W + (h + 1) * Dh)
            for i, s in enumerate(SOURCES):      # K's columns first, then the random view's
                a[s][l, h], b[s][l, h] = ridge_map(m, slice(i * W + h * Dh, i * W + (h + 1) * Dh), v_cols, ridge)
        concat_a[l], concat_b[l] = ridge_map(m, slice(0, W), slice(2 * W, 3 * W), ridge)
    mean = torch.stack([m.mean()[2 * W:].view(Hkv, Dh) for m in moments]).float()
    return KVMaps(a, b, mean, proj, concat_a, concat_b, moments[0].n)


@torch.no_grad()
def describe(model: MiniLlama, windows: Int[Tensor, "N T1"], maps: KVMaps, *, batch_size: int = 8,
             progress=None) -> dict:
    """What the maps and the adjacent layers look like on the evaluation ``windows``, without a loss: ``r2[src]`` per
    layer (src "k", "random", "mean", "k_concat"; the heads pooled), ``r2_per_head[src]`` (L, Hkv); ``cosine[p]``
    (L-1 pairs, one value per sequence) and ``cka[p]`` (L-1 pairs, the tokens pooled) of K before RoPE ("k") and of
    V ("v") between layers l and l+1."""
    L, W = model.cfg.n_layers, model.cfg.n_kv_heads * model.cfg.head_dim
    srcs = ("k", "random", "mean", "k_concat")
    ex = {s: [Explained() for _ in range(L)] for s in srcs}
    pair = {p: [Moments(2 * W) for _ in range(L - 1)] for p in "kv"}
    cos = {p: [[] for _ in range(L - 1)] for p in "kv"}
    for w in windows.split(batch_size):
        pts = kv_points(model, w[:, :-1])
        acts = {p: [pts[f"blocks.{l}.attn.{n}"] for l in range(L)] for p, n in (("k", "k_pre"), ("v", "v"))}
        for l in range(L):
            k, v, h = acts["k"][l], acts["v"][l], pts[f"blocks.{l}.attn.v_in"]
            for s in SOURCES:
                ex[s][l].add(v, maps.predict(s, l, maps.source(s, l, k, h)))
            ex["mean"][l].add(v, maps.mean_v(l, v))
            ex["k_concat"][l].add(v, maps.predict_concat(l, k))
        for p in "kv":
            for l in range(L - 1):
                a, b = acts[p][l], acts[p][l + 1]
                cos[p][l] += token_cosine(a, b).tolist()
                pair[p][l].add(torch.cat([_flat(a), _flat(b)], dim=-1))
        if progress is not None:
            progress(len(w))
    return {"r2": {s: [e.pooled() for e in ex[s]] for s in srcs},
            "r2_per_head": {s: [e.per_head() for e in ex[s]] for s in srcs},
            "cosine": cos, "cka": {p: [linear_cka(m, W) for m in pair[p]] for p in "kv"}}


# -- the interventions (hook builders for interventions.paired_losses) -----------------------------------------

def v_map_hooks(maps: KVMaps, src: str):
    """A :data:`~vrs_edu.chapters.ch08_real_decoder.interventions.SetHooks`: at each of ``layers``, V := map ``src``'s
    prediction ("k": from the layer's own K before RoPE; "random": from its input's random view; "mean": V's
    calibration mean), read live in the patched run (with several layers patched, a layer maps the K its own, already
    changed, input gives: what a K = V model computes)."""
    read = {"k": "k_pre", "random": "v_in", "mean": None}[src]

    def build(layers, x, clean, donor):
        hooks, seen = {}, {}
        for l in layers:
            if read is not None:       # k_pre and v_in pass their hooks before v does (LlamaAttention.forward)
                hooks[f"blocks.{l}.attn.{read}"] = partial(_keep, seen, l)

            def replace(v, l=l):
                if src == "mean":
                    return maps.mean_v(l, v)
                k, h = (seen[l], None) if src == "k" else (v, seen[l])   # v: only the shape of the heads
                return maps.predict(src, l, maps.source(src, l, k, h)).to(v.dtype)
            hooks[f"blocks.{l}.attn.v"] = replace
        return hooks or None
    return build


def shared_kv_hooks(layers, x, clean, donor):
    """Cross-layer KV sharing (CLA, arXiv 2405.12981): in each consecutive pair (a, b) of ``layers``, layer b attends
    over layer a's keys (after RoPE, as a cache holds them) and values from the same run; b's own K and V go unused.
    A pair (a, a) changes nothing; no layers: None (the condition does not apply). Raises ValueError on an odd number
    of layers or a pair with b < a."""
    if len(layers) % 2:
        raise ValueError(f"shared KV pairs layers: give an even number, got {list(layers)}")
    store, hooks = {}, {}
    for a, b in zip(layers[0::2], layers[1::2]):
        if b < a:
            raise ValueError(f"a layer can only read a cache written before it: got the pair ({a}, {b})")
        for p in ("k", "v"):
            hooks[f"blocks.{a}.attn.{p}"] = partial(_keep, store, (a, p))
            if b != a:
                hooks[f"blocks.{b}.attn.{p}"] = lambda t, key=(a, p): store[key].to(t.dtype)
    return hooks or None


def cla_layers(layers: list[int]) -> tuple[int, ...]:
    """The pairs (20, 21), (22, 23), … of ``layers`` as one flat tuple (an odd last layer left out)."""
    return tuple(layers[: len(layers) // 2 * 2])


def conditions(maps: KVMaps, n_layers: int) -> dict[str, Condition]:
    """Every measured intervention by name: ``V := map(K) · l`` and ``V := mean · l`` per layer; ``V := {map(K),
    mean, map(random)} · late``; ``shared KV · l`` (layer l+1 reads l's) per pair; ``shared KV · late`` (CLA)."""
    late = thirds(n_layers)["late"]
    c = {}
    for l in range(n_layers):
        c[f"V := map(K) · {l}"] = Condition((l,), v_map_hooks(maps, "k"))
        c[f"V := mean · {l}"] = Condition((l,), v_map_hooks(maps, "mean"))
    for src, word in (("k", "map(K)"), ("mean", "mean"), ("random", "map(random)")):
        c[f"V := {word} · late"] = Condition(tuple(late), v_map_hooks(maps, src))
    for l in range(n_layers - 1):
        c[f"shared KV · {l}"] = Condition((l, l + 1), shared_kv_hooks)
    c["shared KV · late"] = Condition(cla_layers(late), shared_kv_hooks)
    return c


# -- the run ----------------------------------------------------------------------------------------------------

def _mean(v: list[float]) -> float:
    return sum(v) / len(v)


def measure(model: MiniLlama, w: Windows, cfg: dict, *, seed: int = 0, show: bool = False) -> dict:
    """The whole experiment on split windows ``w``: fit the maps on ``calib_windows`` calibration windows, describe
    on ``describe_sequences`` evaluation windows, the losses on ``loss_sequences`` of them (evenly spaced)."""
    L, bs, times, stamp = model.cfg.n_layers, cfg["batch_size"], {}, time.perf_counter()

    def lap(name):
        nonlocal stamp
        times[name] = round(time.perf_counter() - stamp, 1)
        stamp = time.perf_counter()

    calib = w.calib[subset(len(w.calib), cfg["calib_windows"])]
    desc_idx, loss_idx = subset(len(w.eval), cfg["describe_sequences"]), subset(len(w.eval), cfg["loss_sequences"])
    bar = progress_bar(total=len(calib) + len(desc_idx) + len(loss_idx), desc=NAME, show=show, leave=False)
    maps = fit_maps(model, calib, batch_size=bs, ridge=cfg["ridge"], seed=seed, progress=bar.update)
    lap("calibration")
    d = describe(model, w.eval[desc_idx], maps, batch_size=bs, progress=bar.update)
    lap("describe")
    # every condition re-runs the layers from the first it patches, from the clean run's stream there
    r = paired_losses(model, w.eval[loss_idx], conditions(maps, L), bs, progress=bar.update,
                      capture=tuple(f"blocks.{l}.resid_pre" for l in range(L)))
    bar.close()
    lap("losses")
    late = thirds(L)["late"]

    def vals(name):
        return r[name].tolist()
    k_eq_v = {"where": "K before RoPE, per KV head (Dh -> Dh), an intercept, ridge λ = ridge · tr(C_KK)/Dh",
              "r2": d["r2"], "r2_per_head": d["r2_per_head"],
              "loss": {"k": [vals(f"V := map(K) · {l}") for l in range(L)],
                       "mean": [vals(f"V := mean · {l}") for l in range(L)]},
              "late_loss": {s: vals(f"V := {word} · late") for s, word in
                            (("k", "map(K)"), ("mean", "mean"), ("random", "map(random)"))}}
    sharing = {"pairs": [[l, l + 1] for l in range(L - 1)], "cosine": d["cosine"], "cka": d["cka"],
               "loss": [vals(f"shared KV · {l}") for l in range(L - 1)],
               "late_pairs": [list(p) for p in zip(cla_layers(late)[0::2], cla_layers(late)[1::2])],
               "late_loss": vals("shared KV · late")}
    means = {"r2_k": d["r2"]["k"], "r2_random": d["r2"]["random"], "r2_k_concat": d["r2"]["k_concat"],
             "dloss_v_from_k": [_mean(v) for v in k_eq_v["loss"]["k"]],
             "dloss_v_mean": [_mean(v) for v in k_eq_v["loss"]["mean"]],
             "late_dloss": {s: _mean(v) for s, v in k_eq_v["late_loss"].items()},
             "cos_k": [_mean(v) for v in d["cosine"]["k"]], "cos_v": [_mean(v) for v in d["cosine"]["v"]],
             "cka_k": d["cka"]["k"], "cka_v": d["cka"]["v"], "dloss_shared_kv": [_mean(v) for v in sharing["loss"]],
             "late_dloss_shared_kv": _mean(sharing["late_loss"])}
    return {"settings": cfg, "thirds": thirds(L), "tolerance": TOLERANCE, "sesoi": SESOI, "sesoi_cos": SESOI_COS,
            "split": {"corpus_tokens": w.corpus_tokens, "seq_len": w.seq_len, "calib_windows": len(calib),
                      "calib_tokens": maps.tokens, "described_on": desc_idx.tolist(), "loss_on": loss_idx.tolist(),
                      "head_dim": model.cfg.head_dim, "n_kv_heads": model.cfg.n_kv_heads},
            "clean": {"values": r["clean"].tolist(), "mean": float(r["clean"].mean())},
            "k_eq_v": k_eq_v, "sharing": sharing, "means": means, "stage_seconds": times}


def _minus(a: list[float], b: list[float]) -> list[float]:
    return [x - y for x, y in zip(a, b)]


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-sequence values of every declared test, from a stored result."""
    q1, q2 = result["k_eq_v"], result["sharing"]
    out = {f"v_from_k_free_{l}": v for l, v in enumerate(q1["loss"]["k"])}
    late = q1["late_loss"]
    out |= {"late_v_from_k_free": late["k"], "late_v_from_k_beats_mean": _minus(late["k"], late["mean"]),
            "late_v_from_k_beats_random": _minus(late["k"], late["random"])}
    out |= {f"shared_kv_free_{l}": v for l, v in enumerate(q2["loss"])}
    out["late_shared_kv_free"] = q2["late_loss"]
    parts = result["thirds"]
    for p in "kv":
        cos = q2["cosine"][p]                    # (pairs, sequences); pair l = layers (l, l+1)

        def third_mean(layers):
            pairs = layers[:-1]                  # both layers of the pair in the third
            return [_mean([cos[l][s] for l in pairs]) for s in range(len(cos[0]))]
        out[f"late_adjacent_{p}_more_similar"] = _minus(third_mean(parts["late"]), third_mean(parts["early"]))
    return out


def facts(result: dict) -> dict[str, float]:
    """The preconditions' values."""
    split = result["split"]
    return {"clean_loss_sane": result["clean"]["mean"],
            "fit_overdetermined": split["calib_tokens"] / (split["head_dim"] + 1)}


def verdicts(result: dict) -> list[Verdict]:
    """The declared tests judged on a stored result (:func:`vrs_edu.lab.analysis.judge`)."""
    tests, pre = declared(len(result["k_eq_v"]["loss"]["k"]))
    return judge(tests, test_values(result), preconditions=pre, facts=facts(result))


def decoder_kv_designs(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                       options: RunOptions = RunOptions()) -> dict:
    if tokenizer is not None:
        raise ValueError(f"--tokenizer does not apply to {NAME}: the text is tokenised by the model's own tokenizer, "
                         f"got --tokenizer {tokenizer}")
    if len(seeds) != 1:
        raise ValueError(f"recipe {NAME} draws its random projections with one seed: give exactly one, got {seeds}")
    cfg = QUICK if quick else SETTINGS
    t0 = time.perf_counter()
    dec = load_decoder(torch.float32)
    text = corpus or named_corpus(DEFAULT_NAME)
    w = make_windows(dec.encode(text.text), cfg["seq_len"], cfg["n_eval"], cfg["calib_per_eval"], cfg["min_eval"],
                     name=f"corpus {text.name}")
    load_s = round(time.perf_counter() - t0, 1)
    payload = {"model": MODEL_NAME, "gguf_sha256": GGUF_SHA256,
               **measure(dec.model, w, cfg, seed=seeds[0], show=options.progress and not quick)}
    payload["stage_seconds"] = {"load": load_s, **payload["stage_seconds"]}
    payload["facts"] = facts(payload)
    payload["verdicts"] = verdict_records(verdicts(payload))
    return payload


# Budget (float32, 2 threads): a resumed pass from layer l costs (30 − l) layers and the 49,152-row head, ~0.25 s a
# sequence of 128 tokens on average on an idle machine (real-decoder's layer scan: 251 s for 4 sequences x 300
# conditions), so 93 conditions on 8 sequences ~3 min; the maps' and the descriptions' passes (32 + 32 windows, the
# layers without the head, and float64 sums of 576-wide rows per layer) ~1-2 min; the load ~15 s. The first full
# run took 587 s on a busy machine (load 4.2 at its start, 2.2 at its end): load 38 s, calibration 117, describe 87,
# losses 345. What a recorded run took: its stage_seconds and wall_time_s.
RECIPE = Recipe(NAME, decoder_kv_designs,
                "SmolLM2-135M (the dequantised Q4_1 GGUF of chapter 08), post hoc: could each layer's V be a linear "
                "map of its K (Gemma 4's K = V), and could adjacent layers share one KV cache (CLA, MiniCache)? R², "
                "cosine, CKA and nats lost per layer, against a mean and a random-projection control",
                default_seeds=(0,), budget_s=20 * 60, text=True, verdicts=verdicts)
