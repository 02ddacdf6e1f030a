"""Hyper-connections: n residual streams instead of one, read (collapsed) before each block and written after it.

* **HC**, Zhu et al., "Hyper-Connections", arXiv 2409.19606 (ICLR 2025), sec. 2 and Algorithm 2 (appendix). The
  stream is a matrix H (n, D), at the start n copies of the embedding. A block at layer k reads ``h_in = A_mᵀ H``,
  the streams are mixed ``H' = A_rᵀ H``, and its output is written back with weights B: ``H ← Bᵀ h_out + A_rᵀ H``.
  Static part (the paper's init): ``A_m = e_{k mod n}`` (layer k reads stream k mod n), ``A_r = I`` (the streams stay
  separate: the identity path), ``B = 1`` (the output goes to every stream), so that at init n = 1 is the Pre-Norm
  residual. Dynamic part: ``s_α · tanh(norm(H) W_α)`` added to ``[A_m, A_r]`` and ``s_β · tanh(norm(H) W_β)`` added to
  B, W zero at init. :class:`HyperConnection`.
* **mHC**, Xie et al., "manifold-constrained hyper-connections", arXiv 2512.24880, as shipped in DeepSeek-V4
  (transformers ``DeepseekV4HyperConnection``; config ``hc_mult`` = n, ``hc_sinkhorn_iters``, ``hc_eps``). From the
  flattened, RMS-normalised streams x̃ (n·D,) one linear map ``fn`` gives three sets of logits; with ``base`` and
  three ``scale`` s: ``pre = sigmoid(·) + eps`` (n, the read), ``post = 2·sigmoid(·)`` (n, the write), and ``comb``
  (n, n), the stream mixing, ``softmax`` over rows + eps, then projected by Sinkhorn-Knopp onto the doubly-stochastic
  matrices (rows and columns sum to 1: mixing can neither amplify nor lose the streams' total). The step is
  ``H ← post ⊗ h_out + combᵀ H``. :class:`ManifoldHyperConnection`, :func:`sinkhorn`. After the last layer
  DeepSeek-V4 collapses the streams with weights of the same form (``DeepseekV4HyperHead``): :class:`HyperHead`.

Inside TinyGPT (config fields ``hyper_connections`` = n and ``hc_kind``) the streams take the place of the depth mixer
(:class:`HyperConnectionStreams`): one connection around each attention and each MLP, as DeepSeek-V4's decoder layer
has (``attn_hc``, ``ffn_hc``), the embedding copied into the n streams, and at the end the head (mHC) or, for HC, the
sum of the streams (the HC paper's final read-out).

Shapes: B batch, T sequence, n streams, D = d_model. Streams are (B, T, n, D).
"""
from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor, nn

from vrs_edu.nn.depth_mixer import DepthMixer, DepthRead, Layers
from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.layers import SeededInit

HCKind = Literal["hc", "mhc"]
HC_KINDS: tuple[HCKind, ...] = ("hc", "mhc")   # what TinyGPTConfig.validate accepts for ``hc_kind``


def _mix_streams(w: Float[Tensor, "... n m"], H: Float[Tensor, "B T n D"]) -> Float[Tensor, "B T m D"]:
    """``wᵀ H``: output stream k is ``Σ_j w_jk H_j``. Written as a broadcast product and a sum: a batched matmul of
    one tiny (n, m) matrix per token is several times slower on a CPU (same numbers up to float rounding)."""
    return (w[..., None] * H[..., :, None, :]).sum(dim=-3)


def _check_streams(H: Tensor, n: int, d_model: int) -> None:
    if H.dim() != 4 or H.shape[-2:] != (n, d_model):
        raise ValueError(f"streams must be (B, T, n={n}, D={d_model}), got shape {tuple(H.shape)}")


class HyperConnection(nn.Module):
    """Zhu et al.'s (dynamic) hyper-connection around the block at layer ``layer_idx`` (arXiv 2409.19606, Alg. 2).

    Parameters: ``static_alpha`` (n, n+1) = ``[A_m | A_r]`` = ``[e_{k mod n} | I]``, ``static_beta`` (n,) = 1; with
    ``dynamic``: ``alpha_fn`` (D, n+1) and ``beta_fn`` (D,), zero, and the scalars ``alpha_scale``, ``beta_scale``
    (0.01). The dynamic weights read ``LayerNorm(H)`` (without affine parameters here).

    :meth:`read` returns the block's input, the mixed streams and the write weights; :meth:`write` adds the block's
    output. At init ``read`` gives stream ``k mod n`` and the streams unchanged, and ``write`` adds h_out to each.

    Raises:
        ValueError: if ``n_streams`` < 1 or ``layer_idx`` < 0; at call time if the streams are not (B, T, n, D).
    """

    def __init__(self, d_model: int, n_streams: int, layer_idx: int, dynamic: bool = True):
        super().__init__()
        if n_streams < 1 or layer_idx < 0:
            raise ValueError(f"n_streams must be >= 1 and layer_idx >= 0, got {n_streams} and {layer_idx}")
        self.d_model, self.n, self.dynamic = d_model, n_streams, dynamic
        a_m = F.one_hot(torch.tensor(layer_idx % n_streams), n_streams).float()[:, None]   # (n, 1)
        self.static_alpha = nn.Parameter(torch.cat([a_m, torch.eye(n_streams)], dim=1))    # (n, n+1)
        self.static_beta = nn.Parameter(torch.ones(n_streams))
        if dynamic:
            self.alpha_fn = nn.Parameter(torch.zeros(d_model, n_streams + 1))
            self.beta_fn = nn.Parameter(torch.zeros(d_model))
            self.alpha_scale = nn.Parameter(torch.tensor(0.01))
            self.beta_scale = nn.Parameter(torch.tensor(0.01))
        self.layer_idx = layer_idx

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """The paper's init (no random draw): ``[e_{k mod n} | I]``, B = 1, W = 0, scales 0.01."""
        a_m = F.one_hot(torch.tensor(self.layer_idx % self.n), self.n).float()[:, None]
        self.static_alpha.copy_(torch.cat([a_m, torch.eye(self.n)], dim=1))
        self.static_beta.fill_(1.0)
        if self.dynamic:
            self.alpha_fn.zero_(), self.beta_fn.zero_()
            self.alpha_scale.fill_(0.01), self.beta_scale.fill_(0.01)

    def coefficients(self) -> list[nn.Parameter]:
        """The mixing weights and their scales (trained as coefficients); W_α, W_β are projections."""
        return [self.static_alpha, self.static_beta] + ([self.alpha_scale, self.beta_scale] if self.dynamic else [])

    def read(self, H: Float[Tensor, "B T n D"]
             ) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B T n D"], Float[Tensor, "B T n"]]:
        """``(h_in, mixed, beta)``: the block's input ``A_mᵀ H``, the streams ``A_rᵀ H``, and the write weights B."""
        _check_streams(H, self.n, self.d_model)
        alpha, beta = self.static_alpha, self.static_beta
        if self.dynamic:
            Hn = F.layer_norm(H, (self.d_model,))
            alpha = alpha + self.alpha_scale * torch.tanh(Hn @ self.alpha_fn)              # (B, T, n, n+1)
            beta = beta + self.beta_scale * torch.tanh(Hn @ self.beta_fn)                  # (B, T, n)
        mix = _mix_streams(alpha, H)                                                       # (B, T, n+1, D)
        return mix[..., 0, :], mix[..., 1:, :], beta.expand(*H.shape[:-1])

    def write(self, h_out: Float[Tensor, "B T D"], mixed: Float[Tensor, "B T n D"],
              beta: Float[Tensor, "B T n"]) -> Float[Tensor, "B T n D"]:
        """``H ← B ⊗ h_out + A_rᵀ H``: stream i receives ``beta_i · h_out``."""
        return beta[..., None] * h_out[..., None, :] + mixed


def sinkhorn(logits: Float[Tensor, "... n n"], iters: int = 20, eps: float = 1e-6) -> Float[Tensor, "... n n"]:
    """DeepSeek-V4's Sinkhorn-Knopp projection of ``logits`` onto (nearly) doubly-stochastic matrices.

    ``M = softmax(logits, rows) + eps``, then divide by the column sums, then ``iters - 1`` times by the row sums and
    the column sums (each sum + eps, which keeps a sum of 0 finite). Entries stay > 0. The last step normalises
    columns, so columns sum to ``s / (s + eps)`` (1 − about eps) and rows to 1 up to the remaining Sinkhorn error.

    Raises:
        ValueError: if the last two axes are not square or ``iters`` < 1.
    """
    if logits.dim() < 2 or logits.size(-1) != logits.size(-2):
        raise ValueError(f"logits must be (..., n, n), got shape {tuple(logits.shape)}")
    if iters < 1:
        raise ValueError(f"iters must be >= 1, got {iters}")
    m = logits.softmax(dim=-1) + eps
    # (n, n, ...) while iterating: sums over the leading axes add whole contiguous rows, 3x faster on a CPU than
    # sums over a trailing axis of 4 (the same numbers)
    m = m.movedim((-2, -1), (0, 1)).contiguous()
    m = m / (m.sum(dim=0, keepdim=True) + eps)
    for _ in range(iters - 1):
        m = m / (m.sum(dim=1, keepdim=True) + eps)
        m = m / (m.sum(dim=0, keepdim=True) + eps)
    return m.movedim((0, 1), (-2, -1))


class ManifoldHyperConnection(nn.Module):
    """mHC as DeepSeek-V4 ships it (arXiv 2512.24880; transformers ``DeepseekV4HyperConnection``).

    Parameters (DeepSeek-V4's names): ``fn`` ((2+n)·n, n·D), ``base`` ((2+n)·n,), ``scale`` (3,) for pre, post, comb.
    ``forward(H)`` returns ``(post (B, T, n), comb (B, T, n, n), h_in (B, T, D))`` with ``h_in = Σ_i pre_i H_i``;
    :meth:`write` is the rest of the step. Computed in float32 (DeepSeek keeps these modules in float32).

    Raises:
        ValueError: if ``n_streams`` or ``sinkhorn_iters`` < 1; at call time if the streams are not (B, T, n, D).
    """

    def __init__(self, d_model: int, n_streams: int, sinkhorn_iters: int = 20, eps: float = 1e-6,
                 norm_eps: float = 1e-6):
        super().__init__()
        if n_streams < 1 or sinkhorn_iters < 1:
            raise ValueError(f"n_streams and sinkhorn_iters must be >= 1, got {n_streams} and {sinkhorn_iters}")
        self.d_model, self.n, self.iters, self.eps, self.norm_eps = d_model, n_streams, sinkhorn_iters, eps, norm_eps
        self.fn = nn.Parameter(torch.zeros((2 + n_streams) * n_streams, n_streams * d_model))
        self.base = nn.Parameter(torch.zeros((2 + n_streams) * n_streams))
        self.scale = nn.Parameter(torch.ones(3))

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """DeepSeek-V4's init (``_init_weights``): ``fn`` from N(0, 0.02²), ``base`` 0, ``scale`` 1. A random ``fn``
        breaks the symmetry of n identical streams (with ``fn`` = 0 they would stay identical)."""
        init.normal_(self, "fn")
        self.base.zero_()
        self.scale.fill_(1.0)

    def coefficients(self) -> list[nn.Parameter]:
        """``base`` and ``scale`` (trained as coefficients); ``fn`` is a projection."""
        return [self.base, self.scale]

    def forward(self, H: Float[Tensor, "B T n D"]
                ) -> tuple[Float[Tensor, "B T n"], Float[Tensor, "B T n n"], Float[Tensor, "B T D"]]:
        _check_streams(H, self.n, self.d_model)
        n = self.n
        flat = F.rms_norm(H.flatten(-2).float(), (n * self.d_model,), eps=self.norm_eps)
        pre_w, post_w, comb_w = F.linear(flat, self.fn.float()).split([n, n, n * n], dim=-1)
        pre_b, post_b, comb_b = self.base.split([n, n, n * n])
        s_pre, s_post, s_comb = self.scale.unbind(0)
        pre = torch.sigmoid(pre_w * s_pre + pre_b) + self.eps
        post = 2 * torch.sigmoid(post_w * s_post + post_b)
        comb = sinkhorn((comb_w * s_comb + comb_b).unflatten(-1, (n, n)), self.iters, self.eps)
        h_in = (pre[..., None] * H).sum(dim=-2).to(H.dtype)
        return post, comb, h_in

    def write(self, H: Float[Tensor, "B T n D"], h_out: Float[Tensor, "B T D"], post: Float[Tensor, "B T n"],
              comb: Float[Tensor, "B T n n"]) -> Float[Tensor, "B T n D"]:
        """``H ← post ⊗ h_out + combᵀ H``: stream k receives ``post_k · h_out + Σ_j comb_jk H_j``."""
        return post.to(H.dtype)[..., None] * h_out[..., None, :] + _mix_streams(comb.to(H.dtype), H)


class HyperHead(nn.Module):
    """DeepSeek-V4's final collapse of the streams (``DeepseekV4HyperHead``): ``h = Σ_i pre_i H_i`` with
    ``pre = sigmoid(scale · (RMSNorm(flat H) · fnᵀ) + base) + eps`` (n,). Parameters ``hc_fn`` (n, n·D), ``hc_base``
    (n,), ``hc_scale`` (1,); init as DeepSeek's: N(0, 0.02²), 0, 1.

    Raises:
        ValueError: (at call time) streams not (B, T, n, D).
    """

    def __init__(self, d_model: int, n_streams: int, eps: float = 1e-6, norm_eps: float = 1e-6):
        super().__init__()
        self.d_model, self.n, self.eps, self.norm_eps = d_model, n_streams, eps, norm_eps
        self.hc_fn = nn.Parameter(torch.zeros(n_streams, n_streams * d_model))
        self.hc_base = nn.Parameter(torch.zeros(n_streams))
        self.hc_scale = nn.Parameter(torch.ones(1))

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        init.normal_(self, "hc_fn")
        self.hc_base.zero_()
        self.hc_scale.fill_(1.0)

    def coefficients(self) -> list[nn.Parameter]:
        return [self.hc_base, self.hc_scale]

    def forward(self, H: Float[Tensor, "B T n D"]) -> Float[Tensor, "B T D"]:
        _check_streams(H, self.n, self.d_model)
        flat = F.rms_norm(H.flatten(-2).float(), (self.n * self.d_model,), eps=self.norm_eps)
        logits = F.linear(flat, self.hc_fn.float()) * self.hc_scale.float() + self.hc_base.float()
        pre = torch.sigmoid(logits) + self.eps
        return (pre[..., None] * H).sum(dim=-2).to(H.dtype)


class HyperConnectionStreams(DepthMixer):
    """TinyGPT's residual stream widened to n streams, HC (``kind="hc"``, arXiv 2409.19606) or mHC (``"mhc"``,
    arXiv 2512.24880), in the depth-mixer slot (:mod:`vrs_edu.nn.depth`) as a sub-layer mixer: block l's attention
    reads ``forward(l, …).resid`` and its MLP ``mlp_input(l, …)``, each the streams collapsed by that sub-layer's
    connection; the sub-layer's output is written back into the streams before the next read. ``forward(L, …)``
    collapses them for the LM head (mHC: :class:`HyperHead`; HC: their sum).

    The streams H (B, T, n, D) are a running state: step k's weights are computed from the streams after step
    k − 1, so they cannot be rebuilt from the list of outputs the mixer interface hands over. They are kept in
    ``self._carry`` between the calls of one forward pass (``forward(0, …)`` starts them from the embedding, n copies).

    Parameters: ``attn_hc.{l}``, ``mlp_hc.{l}`` (one connection per sub-layer; HC's layer index k counts sub-layers,
    so that attention and MLP read different streams at init) and, for mHC, ``head``. Hook points (mHC):
    ``depth.{l}.attn.comb`` and ``depth.{l}.mlp.comb`` (B, T, n, n), the doubly-stochastic stream mixing.

    Raises:
        ValueError: an unknown ``kind`` or ``n_streams`` < 1.
    """

    sublayers = True

    def __init__(self, kind: HCKind, n_streams: int, n_layers: int, d_model: int):
        super().__init__()
        if kind not in HC_KINDS or n_streams < 1:
            raise ValueError(f"kind must be one of {HC_KINDS} and n_streams >= 1, got {kind!r} and {n_streams}")
        self.kind, self.n, self.n_layers = kind, n_streams, n_layers

        def connection(k: int) -> nn.Module:
            return (ManifoldHyperConnection(d_model, n_streams) if kind == "mhc"
                    else HyperConnection(d_model, n_streams, layer_idx=k))

        self.attn_hc = nn.ModuleList([connection(2 * l) for l in range(n_layers)])
        self.mlp_hc = nn.ModuleList([connection(2 * l + 1) for l in range(n_layers)])
        self.head = HyperHead(d_model, n_streams) if kind == "mhc" else None
        self._carry: tuple | None = None

    def connections(self) -> list[nn.Module]:
        return [*self.attn_hc, *self.mlp_hc] + ([self.head] if self.head is not None else [])

    def coefficients(self) -> list[nn.Parameter]:
        return [p for c in self.connections() for p in c.coefficients()]

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """mHC's projections from the seeded initialiser (by name), everything else at its paper's value."""
        for part in ("attn_hc", "mlp_hc"):
            for l, c in enumerate(getattr(self, part)):
                if self.kind == "mhc":
                    c.reset_parameters(init.scoped(f"{part}.{l}"))
                else:
                    c.reset_parameters()
        if self.head is not None:
            self.head.reset_parameters(init.scoped("head"))

    def _read(self, hc: nn.Module, H: Tensor, hook: Hook, name: str) -> Tensor:
        """The sub-layer's input (B, T, D) from the streams; keeps what its write needs."""
        if self.kind == "mhc":
            post, comb, h_in = hc(H)
            self._carry = (hc, H, post, hook(f"{name}.comb", comb))
        else:
            h_in, mixed, beta = hc.read(H)
            self._carry = (hc, mixed, beta)
        return h_in

    def _write(self, out: Tensor) -> Tensor:
        """The streams after the last-read sub-layer wrote ``out`` (B, T, D)."""
        if self.kind == "mhc":
            hc, H, post, comb = self._carry
            return hc.write(H, out, post, comb)
        hc, mixed, beta = self._carry
        return hc.write(out, mixed, beta)

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:                                       # n copies of the embedding
            H = outputs[0][..., None, :].expand(*outputs[0].shape[:-1], self.n, outputs[0].size(-1))
        else:                                            # block l-1's MLP output into the streams
            H = self._write(outputs[-1])
        if l == self.n_layers:
            self._carry = None
            return DepthRead(self.head(H) if self.head is not None else H.sum(dim=-2))
        return DepthRead(self._read(self.attn_hc[l], H, hook, f"depth.{l}.attn"))

    def mlp_input(self, l: int, outputs: Layers, attn_out: Float[Tensor, "B T D"],
                  hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        H = self._write(attn_out)                        # attention's output into the streams, then the MLP's read
        return self._read(self.mlp_hc[l], H, hook, f"depth.{l}.mlp")
