"""The norm-based view of attention (vrs_edu/nn/attribution.py; Kobayashi et al. 2020, arXiv 2004.10102, and 2021,
arXiv 2109.07152): a hand computation, and on the toy model the per-source vectors sum to the attention output.
(MiniLM: tests/test_bert_parity.py; SmolLM2 with grouped-query attention: tests/test_llama_parity.py.)"""
import pytest
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.attribution import (attention_mixing, contributions, layer_norm_map, mixing_ratio, norm_map,
                                    transformed_values, weight_mixing)


def test_a_heavy_weight_on_a_short_vector_is_a_small_contribution_by_hand():
    # one head, two tokens; f(x_0) = (3, 4) (norm 5), f(x_1) = (0, 1) (norm 1); query 1 looks half at each
    pattern = torch.tensor([[[[1.0, 0.0], [0.5, 0.5]]]])                # (B=1, H=1, T=2, T=2)
    f = torch.tensor([[[[3.0, 4.0], [0.0, 1.0]]]])                       # (B, H, T, D=2)
    assert torch.equal(norm_map(pattern, f)[0, 0, 1], torch.tensor([2.5, 0.5]))   # weights 0.5, 0.5: norms 5 to 1
    c = contributions(pattern, f)
    assert torch.equal(c[0, 1, 0], torch.tensor([1.5, 2.0])) and torch.equal(layer_norm_map(c)[0, 1],
                                                                              torch.tensor([2.5, 0.5]))
    # with no residual, token 1's context part is 0.5 (3, 4) (norm 2.5), its own 0.5 (0, 1) (norm 0.5): 2.5 / 3.0
    r = mixing_ratio(c, torch.zeros(1, 2, 2))
    assert r[0, 1].item() == pytest.approx(2.5 / 3.0) and r[0, 0].item() == 0.0
    # that is the attention sub-layer alone, by norms: the weights said 0.5, the norms 2.5 / 3.0
    assert torch.equal(attention_mixing(c), r)
    assert weight_mixing(pattern)[0].tolist() == [0.0, 0.5]
    # a residual of the token's own adds to its own part: (0, 0.5) + (0, 1.5) has norm 2, so 2.5 / 4.5
    assert mixing_ratio(c, torch.tensor([[[0.0, 0.0], [0.0, 1.5]]]))[0, 1].item() == pytest.approx(2.5 / 4.5)


def test_grouped_query_heads_read_their_kv_head_and_their_columns_of_w_o():
    v = torch.arange(1 * 2 * 3 * 2, dtype=torch.float32).reshape(1, 2, 3, 2)   # 2 KV heads, Dh = 2
    w_o = torch.randn(5, 4 * 2, generator=torch.Generator().manual_seed(0))    # 4 query heads
    f = transformed_values(v, w_o, n_heads=4)
    assert f.shape == (1, 4, 3, 5)
    for h in range(4):   # query heads 0, 1 read KV head 0; 2, 3 read KV head 1
        assert torch.allclose(f[0, h], v[0, h // 2] @ w_o[:, 2 * h:2 * h + 2].T)
    with pytest.raises(ValueError, match=r"transformed_values: expected w_o of shape \(D, 3·2\)"):
        transformed_values(v, w_o, n_heads=3)


def test_on_the_toy_the_sources_sum_to_the_attention_output_at_every_layer():
    torch.manual_seed(0)
    model = TinyGPT(TinyGPTConfig(vocab_size=40, n_layers=3, d_model=48, n_heads=4, block_size=12, seed=9)).eval()
    with torch.no_grad():
        tr = model(torch.randint(0, 40, (3, 12)), trace=True).trace
    for l, block in enumerate(model.blocks):
        attn = block.attn
        f = transformed_values(tr[f"blocks.{l}.attn.v_mix"], attn.o_proj.weight, attn.n_heads)
        c = contributions(tr[f"blocks.{l}.attn.pattern"], f)
        out = c.sum(dim=2) + (attn.o_proj.bias if attn.o_proj.bias is not None else 0.0)
        assert (out - tr[f"blocks.{l}.attn.out"]).abs().max() < 1e-5, l
        r = mixing_ratio(c, tr[f"blocks.{l}.resid_pre"])
        assert ((r >= 0) & (r <= 1)).all() and (r[:, 0] < 1e-6).all()   # the first token has no context
