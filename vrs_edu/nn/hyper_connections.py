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
  ``H ← post ⊗ h_out + combᵀ H``. :class:`ManifoldHyperConnection`, :func:`sinkhorn`.

Shapes: B batch, T sequence, n streams, D = d_model. Streams are (B, T, n, D).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor, nn


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

    def read(self, H: Float[Tensor, "B T n D"]
             ) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B T n D"], Float[Tensor, "B T n"]]:
        """``(h_in, mixed, beta)``: the block's input ``A_mᵀ H``, the streams ``A_rᵀ H``, and the write weights B."""
        _check_streams(H, self.n, self.d_model)
        alpha, beta = self.static_alpha, self.static_beta
        if self.dynamic:
            Hn = F.layer_norm(H, (self.d_model,))
            alpha = alpha + self.alpha_scale * torch.tanh(Hn @ self.alpha_fn)              # (B, T, n, n+1)
            beta = beta + self.beta_scale * torch.tanh(Hn @ self.beta_fn)                  # (B, T, n)
        mix = alpha.transpose(-1, -2) @ H                                                  # (B, T, n+1, D)
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
    m = m / (m.sum(dim=-2, keepdim=True) + eps)
    for _ in range(iters - 1):
        m = m / (m.sum(dim=-1, keepdim=True) + eps)
        m = m / (m.sum(dim=-2, keepdim=True) + eps)
    return m


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
        return post.to(H.dtype)[..., None] * h_out[..., None, :] + comb.to(H.dtype).transpose(-1, -2) @ H
