"""MiniBert is BERT: chapter 07's proof that the minimal, readable encoder computes what Hugging Face's own
``transformers.BertModel`` computes, on the same weights and sentences.

The real-weights tests need the course's ``real-model`` extra (CI installs it); without it they are skipped with the
install command as the reason. The random-weights test needs only ``transformers``.
"""
import os

import pytest
import torch

from vrs_edu.nn.bert import BertConfig, MiniBert, hf_name, sentence_embedding

os.environ.setdefault("HF_HUB_OFFLINE", "1")         # nothing may be fetched from the network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TOL = 1e-4   # the bound on |MiniBert − BertModel| for every hidden state


@pytest.fixture(scope="module")
def hf_model(real):
    transformers = pytest.importorskip("transformers", reason="the parity test needs transformers (real-model extra)")
    transformers.logging.set_verbosity_error()
    return transformers.BertModel.from_pretrained(str(real.folder), attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def sentences(real):
    from vrs_edu.chapters.ch07_real_model.model import corpus_sentences

    # lengths 8..40 tokens, so the batch is padded: padding must not change the real tokens' states
    return corpus_sentences(8, real=real)


def test_hidden_states_agree_with_transformers_bertmodel(real, hf_model, sentences):
    ids, mask = real.encode(sentences)
    assert (~mask).any(), "the batch should contain padding"
    with torch.no_grad():
        ours = real.model(ids, mask, trace=True).trace.stack("resid")                  # (L+1, B, T, D)
        theirs = hf_model(input_ids=ids, attention_mask=mask.long(), output_hidden_states=True).hidden_states
    assert ours.shape[0] == len(theirs) == 7
    for depth, h in enumerate(theirs):
        diff = (ours[depth] - h)[mask].abs().max().item()
        assert diff < TOL, f"depth {depth}: max |MiniBert − BertModel| = {diff:.2e}"


def test_attention_patterns_agree_with_transformers(real, hf_model, sentences):
    ids, mask = real.encode(sentences[:4])
    with torch.no_grad():
        tr = real.model(ids, mask, trace=True).trace
        theirs = hf_model(input_ids=ids, attention_mask=mask.long(), output_attentions=True).attentions
    keys = mask[:, None, :, None] & mask[:, None, None, :]                             # real query, real key
    for l, p in enumerate(theirs):
        ours = tr[f"blocks.{l}.attn.pattern"]
        assert torch.allclose(ours.sum(-1), torch.ones_like(ours.sum(-1)))
        assert (ours.masked_select(~mask[:, None, None, :].expand_as(ours)) == 0).all(), "padding gets no attention"
        assert (ours - p).abs().masked_select(keys.expand_as(ours)).max() < TOL


def test_sentence_embedding_agrees_with_sentence_transformers(real, sentences):
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers (pulled in by the weights "
                                                             "package) checks the pooling")
    model = st.SentenceTransformer(str(real.folder), device="cpu")
    theirs = torch.as_tensor(model.encode(sentences, convert_to_numpy=True))
    ours = real.run(sentences).embedding
    assert (ours - theirs).abs().max() < TOL
    assert torch.allclose(ours.norm(dim=-1), torch.ones(len(sentences)), atol=1e-5)


def test_random_weights_agree_with_transformers_without_the_weights_package():
    transformers = pytest.importorskip("transformers")
    hf_cfg = transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=32, max_position_embeddings=20, attn_implementation="eager")
    torch.manual_seed(0)
    hf = transformers.BertModel(hf_cfg, add_pooling_layer=False).eval()
    ours = MiniBert(BertConfig.from_hf(hf_cfg.to_dict()))
    ours.load_hf_state_dict(hf.state_dict())
    ids = torch.randint(0, 50, (3, 11), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(3, 11, dtype=torch.bool)
    mask[1, 7:] = False
    with torch.no_grad():
        a = ours(ids, mask, trace=True).trace.stack("resid")
        b = torch.stack(hf(input_ids=ids, attention_mask=mask.long(), output_hidden_states=True).hidden_states)
    assert (a - b)[:, mask].abs().max() < 1e-5


def test_every_parameter_has_a_hugging_face_name():
    names = [hf_name(n) for n, _ in MiniBert(BertConfig(n_layers=2, vocab_size=10, d_model=8, n_heads=2, d_mlp=16,
                                                          max_positions=12)).named_parameters()]
    assert "encoder.layer.1.attention.self.value.weight" in names
    assert "embeddings.LayerNorm.bias" in names
    assert len(names) == len(set(names))
    with pytest.raises(ValueError, match="no Hugging Face name"):
        hf_name("blocks.0.attn.nonsense.weight")


def test_loading_a_wrong_checkpoint_names_the_problem():
    cfg = BertConfig(n_layers=1, vocab_size=10, d_model=8, n_heads=2, d_mlp=16, max_positions=12)
    sd = {hf_name(n): p.detach().clone() for n, p in MiniBert(cfg).named_parameters()}
    del sd["encoder.layer.0.attention.self.key.bias"]
    sd["embeddings.word_embeddings.weight"] = torch.zeros(11, 8)
    with pytest.raises(ValueError, match=r"missing encoder\.layer\.0\.attention\.self\.key\.bias"):
        MiniBert(cfg).load_hf_state_dict(sd)
    with pytest.raises(ValueError, match=r"word_embeddings\.weight: shape \(11, 8\)"):
        MiniBert(cfg).load_hf_state_dict(sd)


def test_config_rejects_what_the_minimal_model_does_not_implement():
    with pytest.raises(ValueError, match="gelu"):
        BertConfig.from_hf({"hidden_act": "relu"})
    with pytest.raises(ValueError, match="absolute"):
        BertConfig.from_hf({"position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(d_model=10, n_heads=4).validate()


def test_bad_inputs_raise_value_errors():
    m = MiniBert(BertConfig(n_layers=1, vocab_size=10, d_model=8, n_heads=2, d_mlp=16, max_positions=6))
    with pytest.raises(ValueError, match="token ids must be in 0..9"):
        m(torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match="exceeds max_positions=6"):
        m(torch.zeros(1, 7, dtype=torch.long))
    with pytest.raises(ValueError, match="attention_mask must have the shape"):
        m(torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 4))
    with pytest.raises(ValueError, match="at least one real"):
        m(torch.zeros(2, 3, dtype=torch.long), torch.tensor([[1, 1, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match="does not have"):
        m(torch.zeros(1, 3, dtype=torch.long), hooks={"blocks.5.attn.v": lambda t: t})


def test_sentence_embedding_is_the_normalised_mean_over_real_tokens():
    h = torch.tensor([[[3.0, 0.0], [1.0, 2.0], [100.0, 100.0]]])      # the third token is padding
    mask = torch.tensor([[True, True, False]])
    mean = torch.tensor([2.0, 1.0])
    assert torch.allclose(sentence_embedding(h, mask), (mean / mean.norm()).unsqueeze(0))


def test_hooks_trace_and_patch_the_real_model(real, sentences):
    ids, mask = real.encode(sentences[:3])
    clean = real.model(ids, mask, trace=True)
    tr = clean.trace
    assert tr["blocks.2.attn.v"].shape == (3, 12, ids.size(1), 32)
    assert torch.equal(tr["x0"], tr["blocks.0.resid_pre"])
    assert torch.equal(tr["resid_final"], clean.hidden)
    # Feeding x0 to layer 0's query input changes nothing: it already is layer 0's input.
    same = real.model(ids, mask, hooks={"blocks.0.attn.q_in": lambda t: tr["x0"]})
    assert torch.equal(same.hidden, clean.hidden)
    # Zeroing layer 3's values changes the output.
    other = real.model(ids, mask, hooks={"blocks.3.attn.v": torch.zeros_like})
    assert (other.hidden - clean.hidden).abs().max() > 1e-2


def test_resume_from_a_layer_equals_the_full_pass(real, sentences):
    ids, mask = real.encode(sentences[:3])
    tr = real.model(ids, mask, trace=True).trace
    swap = {"blocks.4.attn.pattern": lambda t: t.flip(-1).softmax(-1)}
    full = real.model(ids, mask, hooks=swap)
    resumed = real.model.resume(tr["blocks.3.resid_pre"], mask, 3, hooks=swap)
    assert torch.allclose(full.hidden, resumed.hidden, atol=1e-6)
    with pytest.raises(ValueError, match="start_layer must be in 0..5"):
        real.model.resume(tr["blocks.3.resid_pre"], mask, 6)


def test_norm_based_sources_sum_to_minilms_attention_and_its_layernorm_splits_the_sum(real, sentences):
    # Kobayashi et al. 2020/2021 (vrs_edu/nn/attribution.py): out_i = Σ_j α_ij f(x_j) + b_O, and the post-LN sum
    # LN(x_i + out_i) = γ (s_i − mean) / σ + γ (c_i − mean) / σ + γ (b_O − mean) / σ + β, to float32 precision
    from vrs_edu.nn.attribution import contributions, transformed_values

    ids, mask = real.encode(sentences[:4])
    with torch.no_grad():
        tr = real.model(ids, mask, trace=True).trace
    for l, block in enumerate(real.model.blocks):
        attn, ln = block.attn, block.ln_attn
        c = contributions(tr[f"blocks.{l}.attn.pattern"],
                          transformed_values(tr[f"blocks.{l}.attn.v"], attn.o_proj.weight, attn.n_heads))
        out = c.sum(dim=2) + attn.o_proj.bias
        assert (out - tr[f"blocks.{l}.attn.out"])[mask].abs().max() < 1e-4, l
        x = tr[f"blocks.{l}.resid_pre"]
        eye = torch.eye(ids.size(1), dtype=torch.bool)
        own, y = c[:, eye], x + out
        sigma = torch.sqrt(y.var(-1, unbiased=False, keepdim=True) + ln.eps)
        parts = [x + own, c.sum(dim=2) - own, attn.o_proj.bias.expand_as(x)]
        split = sum(ln.weight * (p - p.mean(-1, keepdim=True)) / sigma for p in parts) + ln.bias
        assert (split - tr[f"blocks.{l}.resid_mid"])[mask].abs().max() < 1e-4, l
