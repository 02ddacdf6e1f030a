"""The model's numbers are pinned by plain formulas, so that a rewrite of vrs_edu/nn cannot change them unnoticed
(issue 15: stored results, checkpoints and notebook outputs exist and are not re-run).

Known inputs: small TinyGPTs of every depth mixer, x0 mode and value residual. Expected:
* every parameter's initial value is the one its *name* and the seed give (GPT-2 init from a generator seeded by
  crc32("seed:name"), coefficients at their documented values, the bank table x0 · W_Vᵀ), bit for bit;
* the checkpoint keys (parameter names) of a model are the ones written before;
* the logits equal a plain re-statement of the forward pass, written here from the papers' equations;
* the optimizer puts every trainable parameter in exactly one group, the group the name-based rule of the stored
  runs gave it, and refuses groups that leave a parameter out or hold one twice.
"""
import itertools
import math
import zlib

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.lab.train import TrainConfig, check_param_groups, make_optimizer, param_groups
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn import depth, value_residual, x0

SMALL = dict(vocab_size=24, d_model=16, n_layers=3, n_heads=2, block_size=8)
IDX = torch.randint(24, (2, 8), generator=torch.Generator().manual_seed(0))


def drawn(seed: int, name: str, shape, std: float = 0.02) -> torch.Tensor:
    g = torch.Generator().manual_seed(zlib.crc32(f"{seed}:{name}".encode()))
    return torch.empty(shape).normal_(0.0, std, generator=g)


def expected_init(cfg: TinyGPTConfig, name: str, p: torch.Tensor, wte: torch.Tensor) -> torch.Tensor:
    """The initial value of parameter ``name``, from its name alone (the rule the stored runs were trained with)."""
    parts = name.split(".")
    leaf = parts[-1] if parts[-1] != "weight" else parts[-2]
    if "x0" in parts:
        if leaf == "E_v":  # the bank starts as x0 · W_Vᵀ with the baseline's W_V of this layer
            w_v = drawn(cfg.seed, f"blocks.{parts[1]}.attn.v_proj.weight", (cfg.d_model, cfg.d_model))
            return F.rms_norm(wte, (cfg.d_model,), eps=1e-6) @ w_v.T
        return torch.tensor(0.0 if leaf.startswith("beta") else 1.0)
    if "value_residual" in parts:
        return torch.tensor(0.5)
    if parts[0] == "depth":
        i = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
        if parts[1] == "dwa" and cfg.depth_mixer == "dca":
            return torch.ones(p.shape)
        if parts[1] == "dwa":   # DenseFormer, MUDD: weight 1 on the latest state
            return torch.eye(i + 2)[-1].expand(p.shape)
        if parts[1] in ("logits", "pseudo_query", "query_proj", "gamma", "o_proj"):
            return torch.zeros(p.shape)
        if parts[1] == "gain":   # the scalar-gain control: 1, the standard residual
            return torch.ones(p.shape)
    writes_to_stream = parts[0] == "blocks" and name.endswith(("attn.o_proj.weight", "mlp.down.weight"))
    return drawn(cfg.seed, name, p.shape, 0.02 / math.sqrt(2 * cfg.n_layers) if writes_to_stream else 0.02)


INIT_CASES = [dict(depth_mixer=m) for m in depth.MIXERS] + [
    dict(depth_mixer="shortswa", depth_window=2),
    dict(x0_mode="bank", value_residual="learnable", x0_layers=(1, 2), seed=3),
    dict(x0_mode="qkv", value_residual="learnable", depth_mixer="mudd", seed=5),
    dict(x0_mode="shared", depth_mixer="dca"),
    dict(x0_mode="substitute_v", x0_source="random"),
    dict(x0_mode="scale_v", tie_embeddings=True),
]


@pytest.mark.parametrize("case", INIT_CASES, ids=str)
def test_every_parameter_starts_at_the_value_its_name_and_seed_give(case):
    cfg = TinyGPTConfig(**{**SMALL, **case})
    model = TinyGPT(cfg)
    wte = model.wte.weight.detach()
    for name, p in model.named_parameters():
        assert torch.equal(p.detach(), expected_init(cfg, name, p, wte)), name


def test_checkpoint_keys_are_the_parameter_names_written_before():
    model = TinyGPT(TinyGPTConfig(**{**SMALL, "n_layers": 2}, x0_mode="bank", x0_layers=(1,),
                                  value_residual="learnable", depth_mixer="denseformer"))
    attn0 = [f"blocks.0.attn.{w}_proj.weight" for w in "qkvo"]
    assert list(model.state_dict()) == [
        "wte.weight", *attn0, "blocks.0.mlp.up.weight", "blocks.0.mlp.down.weight",
        "blocks.1.x0.gamma", "blocks.1.x0.E_v", *[f"blocks.1.attn.{w}_proj.weight" for w in "qko"],
        "blocks.1.value_residual.lambda_1", "blocks.1.value_residual.lambda_2",
        "blocks.1.mlp.up.weight", "blocks.1.mlp.down.weight", "depth.dwa.0", "depth.dwa.1", "lm_head.weight"]


# --- the forward pass, restated plainly ------------------------------------------------------------------------

def plain_logits(model: TinyGPT, idx: torch.Tensor) -> torch.Tensor:
    """TinyGPT's logits with the residual depth mixer, from its parameters and the equations: pre-norm blocks with
    parameter-free RMSNorm, RoPE (rotate-half), x0 into the projections' inputs (arXiv 2606.02780, eq. 3-6),
    ResFormer / SVFormer (arXiv 2410.17897) and NeuTRENO (arXiv 2312.00751) value residuals."""
    cfg, P = model.cfg, dict(model.named_parameters())
    H, D = cfg.n_heads, cfg.d_model
    Dh, (B, T) = D // H, idx.shape

    def norm(x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def heads(x):
        return x.view(B, T, H, Dh).transpose(1, 2)

    angles = torch.outer(torch.arange(T).float(), 10_000.0 ** (-torch.arange(0, Dh, 2).float() / Dh))

    def rope(x):
        x1, x2 = x.chunk(2, -1)
        return torch.cat([x1 * angles.cos() - x2 * angles.sin(), x1 * angles.sin() + x2 * angles.cos()], -1)

    emb = P["wte.weight"][idx]
    x = norm(emb) if cfg.stream_start == "rmsnorm" else emb
    x0_ = x if cfg.stream_start == "rmsnorm" else norm(emb)
    if cfg.x0_source == "previous":
        x0_ = torch.cat([torch.zeros_like(x0_[:, :1]), x0_[:, :-1]], 1)
    mask = torch.ones(T, T).tril().bool()
    v1 = None
    for l in range(cfg.n_layers):
        pre = f"blocks.{l}."
        c = {n[len(pre) + 3:]: p for n, p in P.items() if n.startswith(pre + "x0.")}  # this layer's x0 scalars
        xn = norm(x)
        q_in, k_in, v_in, v = xn, xn, xn, None
        mode = cfg.x0_mode if l in cfg.resolved_x0_layers() else "none"
        if mode == "qkv":
            q_in, k_in, v_in = (c[f"alpha_{s}"] * xn + c[f"beta_{s}"] * x0_ for s in "qkv")
        elif mode == "shared":
            q_in = k_in = v_in = c["alpha"] * xn + c["beta"] * x0_
        elif mode == "substitute_v":
            v_in = c["gamma"] * x0_
        elif mode == "scale_v":
            v_in = c["gamma"] * xn
        elif mode == "bank":
            v = heads(c["gamma"] * c["E_v"][idx])
        if cfg.value_residual == "svformer" and l > 0:
            v = v1
        q, k = rope(heads(q_in @ P[pre + "attn.q_proj.weight"].T)), rope(heads(k_in @ P[pre + "attn.k_proj.weight"].T))
        if v is None:
            v = heads(v_in @ P[pre + "attn.v_proj.weight"].T)
        if cfg.qk_norm:
            q, k = 1.2 * norm(q), 1.2 * norm(k)
        pattern = (q @ k.transpose(-1, -2) / math.sqrt(Dh)).masked_fill(~mask, float("-inf")).softmax(-1)
        vr = cfg.value_residual if l > 0 else "none"
        lam = {"learnable": (P.get(pre + "value_residual.lambda_1"), P.get(pre + "value_residual.lambda_2")),
               "resformer": (0.5, 0.5)}.get(vr)
        z = pattern @ (lam[0] * v1 + lam[1] * v if lam else v)
        if vr == "neutreno":
            z = z + cfg.neutreno_lambda * (v1 - v)
        attn_out = z.transpose(1, 2).reshape(B, T, D) @ P[pre + "attn.o_proj.weight"].T
        mlp_out = F.gelu(norm(x + attn_out) @ P[pre + "mlp.up.weight"].T) @ P[pre + "mlp.down.weight"].T
        x = x + attn_out + mlp_out
        v1 = v if l == 0 else v1
    return norm(x) @ P["lm_head.weight"].T


FORWARD_CASES = [{}, dict(stream_start="embedding"), dict(qk_norm=True), dict(x0_source="previous", x0_mode="qkv")] + [
    dict(x0_mode=m, x0_layers=(1, 2)) for m in x0.MODES[1:]] + [
    dict(value_residual=v) for v in value_residual.MODES[1:]] + [
    dict(value_residual="learnable", x0_mode="bank", x0_layers=(2,)),
    dict(value_residual="svformer", x0_mode="qkv", x0_layers=(0,), qk_norm=True)]


@pytest.mark.parametrize("case", FORWARD_CASES, ids=str)
def test_logits_equal_the_plain_forward_pass(case):
    model = TinyGPT(TinyGPTConfig(**{**SMALL, **case}))
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():   # move every scalar off its init, so that each coefficient's place in the formula counts
        for p in model.parameters():
            if p.ndim == 0:
                p.copy_(0.5 + torch.rand((), generator=g))
    expected = plain_logits(model, IDX)
    torch.testing.assert_close(model(IDX).logits, expected, atol=1e-5, rtol=1e-5)              # fused attention
    torch.testing.assert_close(model(IDX, trace=True).logits, expected, atol=1e-5, rtol=1e-5)  # explicit path


# --- optimizer groups ------------------------------------------------------------------------------------------

def group_by_name(name: str, p: torch.Tensor, coef_opt: str) -> str:
    """The name-based rule the stored runs were trained with: official x0 groups by leaf name, then coefficients
    (scalars, and mixing weights named dwa / logits / pseudo_query), then matrices by shape. Vertical Attention's
    query projection, ``depth.query_proj`` now, was called ``depth.pseudo_query`` when those runs were trained."""
    parts = name.replace("depth.query_proj.", "depth.pseudo_query.", 1).split(".")
    if coef_opt == "official" and "x0" in parts:
        leaf = parts[-1]
        return "bank_table" if leaf == "E_v" else "x0_alpha" if leaf.startswith("alpha") else "x0_beta_gamma"
    coef = ("alpha", "beta", "gamma", "lambda_1", "lambda_2", "dwa", "logits", "pseudo_query")
    if p.ndim == 0 or any(part.startswith(coef) for part in parts):
        return "coefficients"
    return "matrices" if p.ndim >= 2 else "vectors"


COMBOS = [dict(value_residual=v, x0_mode=m, depth_mixer=d)
          for v, m, d in itertools.product(value_residual.MODES, x0.MODES, depth.MIXERS)]


@pytest.mark.parametrize("coef_opt", ["course", "official"])
def test_every_trainable_parameter_is_in_the_group_the_stored_runs_gave_it(coef_opt):
    checked = 0
    for case in COMBOS:
        cfg = TinyGPTConfig(**SMALL, **case)
        try:
            cfg.validate()
        except ValueError:
            continue
        model = TinyGPT(cfg)
        position = {id(p): i for i, (_, p) in enumerate(model.named_parameters())}
        opt = make_optimizer(model, TrainConfig(coef_opt=coef_opt))
        got = {n: g["name"] for g in opt.param_groups for n, p in model.named_parameters()
               if any(p is q for q in g["params"])}
        assert sum(len(g["params"]) for g in opt.param_groups) == len(position), case      # nothing twice
        assert got == {n: group_by_name(n, p, coef_opt) for n, p in model.named_parameters()}, case
        for g in opt.param_groups:   # in the model's order: a training checkpoint stores the moments in it
            assert [position[id(p)] for p in g["params"]] == sorted(position[id(p)] for p in g["params"])
        checked += 1
    assert checked > 100


def test_the_bank_table_is_a_matrix_with_weight_decay_under_the_course_optimizer():
    """Kept as the stored runs had it (issue 15 calls it an accident): E_v is not declared a coefficient, so under
    coef_opt='course' it trains with the matrices, at the base lr and *with* weight decay."""
    model = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="bank"))
    l = model.cfg.resolved_x0_layers()[0]
    for coef_opt, group in (("course", "matrices"), ("official", "bank_table")):
        groups = param_groups(model, coef_opt)
        assert any(p is model.blocks[l].x0.E_v for p in groups[group])


def test_groups_that_leave_a_parameter_out_or_hold_one_twice_are_refused(monkeypatch):
    model = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="qkv", depth_mixer="denseformer"))
    groups = param_groups(model, "course")
    left_out = {**groups, "coefficients": groups["coefficients"][1:]}
    with pytest.raises(ValueError, match=r"left out \['blocks\.2\.x0\.alpha_q'\]"):
        check_param_groups(model, left_out)
    twice = {**groups, "vectors": [model.blocks[2].x0.beta_v]}
    with pytest.raises(ValueError, match=r"more than once \['blocks\.2\.x0\.beta_v'\]"):
        check_param_groups(model, twice)
    with pytest.raises(ValueError, match="not a trainable parameter"):
        check_param_groups(model, {**groups, "vectors": [torch.nn.Parameter(torch.zeros(3))]})
    # an x0 path that declares its alpha_q as a beta too: two official groups would train it
    kinds = type(model.blocks[2].x0).param_kinds
    monkeypatch.setattr(type(model.blocks[2].x0), "param_kinds",
                        lambda self: {**kinds(self), "beta": kinds(self)["beta"] + [self.alpha_q]})
    with pytest.raises(ValueError, match=r"blocks\.2\.x0\.alpha_q is declared in two optimizer groups"):
        param_groups(model, "official")
