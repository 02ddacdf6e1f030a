# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · What V reuse buys
#
# **Goals.** Measure the KV-cache memory of a decoder whose deep layers reuse values — SVFormer (every layer reads
# V_1) and the bank of values (deep layers look their values up by token id) — from the cache tensors the model
# really builds, and check the bank-of-values paper's break-even formula against the measurement. See what a head
# writes when its values come from a token table: it can be read off the table. Then answer the course's four
# questions with the course's own measurements.
#
# **Question.** Can efficiency or interpretability come from V reuse rather than QK?
#
# **Prerequisites.** Chapters 02 (what V carries), 03 (SVFormer), 04 (x0 and the bank of values) and 05.
#
# **Expected run time.** About 30 seconds at one thread on an idle 2-core laptop CPU (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The KV cache, measured
#
# A decoder generating text keeps, for every layer, the keys and values of every token it has read — the **KV
# cache** — so that each new token attends to the past without recomputing it. Reusing V changes the V half:
#
# * **baseline**: each of the L layers caches K and V, $2\,L\,d$ numbers per token;
# * **SVFormer** (arXiv 2410.17897): layers 2..L own no $W_V$ and attend over $V_1$, so V is cached once:
#   $(L+1)\,d$ per token;
# * **bank of values** (arXiv 2606.02780, sec. 4): a bank layer's value is $\gamma\,E_v[\text{token id}]$ — a table
#   lookup — so it caches no V; instead it keeps a table of $|V|\cdot d$ numbers, whatever the context.
#
# `build_kv_cache(model, idx)` runs the model once over `idx` and collects the tensors a decoder would keep: each
# layer's keys after RoPE, and its values — the layer's own, layer 0's tensor itself for SVFormer (stored once), or
# nothing for a bank layer. `tests/test_kv_cache.py` checks the cache is complete: the last token's attention,
# recomputed from the cache alone, equals the model's. We measure the course's 8-layer, 64-wide word model.

# %%
from vrs_edu.lab.kv_cache import (bov_saving, kv_bytes_per_token, measure, measured_saving,
                                  n_bank_layers)
from vrs_edu.nn import TinyGPTConfig

course_cfg = TinyGPTConfig(vocab_size=2048, d_model=64, n_layers=8, n_heads=4, block_size=1024)
lengths = [64, 256, 1024]
rows = measure(course_cfg, lengths)
print(f"L = {course_cfg.n_layers}, d = {course_cfg.d_model}, |V| = {course_cfg.vocab_size}, "
      "float32; one sequence")
header = ("variant", "T", "cache KB", "bytes/token", "formula", "V tensors", "tables KB")
widths = (5, 9, 12, 8, 10, 10)
print(f"{header[0]:9s} " + " ".join(f"{h:>{w}s}" for h, w in zip(header[1:], widths)))
for r in rows:
    formula = kv_bytes_per_token(r["n_layers"], r["d_model"], r["variant"])
    print(f"{r['variant']:9s} {r['T']:5d} {r['cache_bytes'] / 1024:9.1f} "
          f"{r['bytes_per_token']:12.0f} {formula:8d} {r['n_cached_v']:10d} "
          f"{r['table_bytes'] / 1024:10.1f}")
base = {r["T"]: r["bytes_per_token"] for r in rows if r["variant"] == "baseline"}
for v in ("svformer", "bank"):
    ratio = [r["bytes_per_token"] / base[r["T"]] for r in rows if r["variant"] == v]
    print(f"{v} cache / baseline cache: {ratio[0]:.3f} at every length: {len(set(ratio)) == 1}")

# %% [markdown]
# The measured bytes per token equal the formulas at every length. SVFormer's cache is $(L+1)/(2L)$ of the
# baseline's, the bank's $(2L - n_\text{bank})/(2L)$ — but the bank also holds its tables.
#
# ### The break-even context
#
# The bank-of-values paper gives the saving for $n_\text{bank} = L/3$ bank layers at context $T$:
#
# $$\Delta KV = \tfrac{L}{3}\, d\, (T - |V|)\ \text{numbers},$$
#
# the V cache no longer kept for $T$ tokens minus the tables: positive only once the context is longer than the
# vocabulary. Check it against the measurement — the measured saving is (baseline cache) − (bank cache + tables):

# %%
nb = n_bank_layers(course_cfg.n_layers)
print(f"course model, one sequence: {nb} bank layers (the last third), break-even at T = |V| = "
      f"{course_cfg.vocab_size}")
for T in lengths:
    m = measured_saving(rows, T)
    f = bov_saving(nb, course_cfg.d_model, T, course_cfg.vocab_size) * 4
    print(f"  T = {T:5d}: measured ΔKV {m / 1024:+9.1f} KB, formula {f / 1024:+9.1f} KB, "
          f"equal: {m == f}")

# With a character vocabulary the break-even falls inside contexts we can measure:
from vrs_edu.lab.data import default_corpus_text, train_tokenizer

char_vocab = train_tokenizer(default_corpus_text(), "char").vocab_size
char_cfg = TinyGPTConfig(vocab_size=char_vocab, d_model=64, n_layers=6, n_heads=4, block_size=512)
char_lengths = [char_vocab // 2, char_vocab, 2 * char_vocab, 4 * char_vocab]
char_rows = measure(char_cfg, char_lengths)
nb_c = n_bank_layers(char_cfg.n_layers)
print(f"\ncharacter model: |V| = {char_vocab}, L = {char_cfg.n_layers} ({nb_c} = L/3 bank layers)")
signs = []
for T in char_lengths:
    m = measured_saving(char_rows, T)
    f = bov_saving(nb_c, char_cfg.d_model, T, char_vocab) * 4
    signs.append(m)
    print(f"  T = {T:4d}: measured ΔKV {m / 1024:+8.1f} KB, formula {f / 1024:+8.1f} KB, "
          f"equal: {m == f}")
print(f"measured saving changes sign at T = |V| = {char_vocab}: "
      f"{signs[0] < 0 and signs[1] == 0 and all(s > 0 for s in signs[2:])}")

# %% [markdown]
# These counts are for **one sequence**: its cache, plus the tables. A decoder serving a batch of B sequences
# keeps B caches but one copy of the tables — they are parameters, shared by every sequence — so the bank saves
# memory once B·T exceeds |V|: the break-even context is T = |V|/B. The widget below computes it for any model size
# and batch. SVFormer's cache is smaller than the baseline's at every length and batch.
#
# **And what does the saving cost in quality?** Chapters 03 and 04 trained SVFormer and the bank of values against
# the strong baseline (same seeds, same batches) and declared a test for each before the run. Their paired loss
# differences and the declared tests' verdicts (Holm-corrected within the chapter's family, with their preconditions):

# %%
import textwrap

from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results

for recipe, variant, chapter, test in (("value-residual", "svformer", "03", "svformer_cost"),
                                      ("bank-of-values", "bank", "04", "bank_loss")):
    try:
        # the verdict corpus: < 1 epoch per run
        res = load_results(recipe, corpus=verdict_corpus())
    except FileNotFoundError as e:
        print(f"chapter {chapter}: {e}")
        continue
    comp = res["corpus"]["comparison"][variant]
    d = comp["paired_final"]
    lo, hi = d["ci"]
    print(f"chapter {chapter} (`{res['command']}`, {res['wall_time_s'] / 60:.0f} min):\n"
          f"    {variant} − baseline final val loss {d['mean']:+.3f} nats "
          f"[95% CI {lo:+.3f}, {hi:+.3f}], "
          f"{d['n_negative']}/{d['n']} seeds better")
    rec = {v["name"]: v for v in res.get("verdicts", [])}.get(test)
    if rec:
        line = f"declared test {test}, '{rec['claim']}': {rec['verdict'].upper()}"
        print(textwrap.fill(line, 100, initial_indent="    ", subsequent_indent="      ",
                            break_on_hyphens=False))

# %% [markdown]
# ### Depth-Attention: a read of V over depth at no cache cost
#
# Depth-Attention (Zeng et al., arXiv 2606.05014; chapter 05) goes the other way from SVFormer and the bank: it
# keeps every layer's values but lets a layer's query mix the *cached* values of earlier layers at the same
# position into its own, and stores the mixture in place of its own values. So its cache is the baseline's,
# $2\,L\,d$ numbers per token, and nothing else is kept. Measured on the course model, then its quality at equal
# steps from chapter 05's declared test (on the King James Bible, the verdict corpus):

# %%
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.kv_cache import DEPTH_ATTENTION
from vrs_edu.viz.prose import say, table

da_rows = measure(course_cfg, lengths, variants={"baseline": {}, **DEPTH_ATTENTION})
da_by = {(r["variant"], r["T"]): r["bytes_per_token"] for r in da_rows}
da_formula = kv_bytes_per_token(course_cfg.n_layers, course_cfg.d_model, "depth_attention")
say(table(["T", "Depth-Attention bytes/token", "baseline bytes/token", "formula"],
          [[T, f"{da_by[('depth_attention', T)]:.0f}", f"{da_by[('baseline', T)]:.0f}", da_formula]
           for T in lengths]))
try:
    vod = load_results("v-over-depth", corpus=verdict_corpus())
except FileNotFoundError as e:
    print(f"chapter 05's Depth-Attention runs: {e}")
else:
    from vrs_edu.lab.recipes.v_over_depth import verdicts as vod_verdicts

    da = {r.test.name: r for r in vod_verdicts(vod) if r.test.family == "depth_attention"}
    say(f"Its quality, chapter 05's declared tests at equal steps "
        f"({len(da['depth_attention_loss'].values)} paired seeds): final validation loss − the "
        f"baseline's {da['depth_attention_loss'].interval()} nats, "
        f"**{da['depth_attention_loss'].verdict}**; − Attention Residuals' "
        f"{da['depth_attention_beats_attnres'].interval()} nats, "
        f"**{da['depth_attention_beats_attnres'].verdict}**. "
        "It saves no cache; what its read of V over depth buys here is "
        + ("a lower loss than the baseline's at the same cache."
           if da["depth_attention_loss"].verdict == "reproduced" else "no decided change in loss."))

# %% [markdown]
# ### Widget — the cache at any size
#
# Move the sliders to size a model. The defaults are a GPT-2-small-sized model (L = 12, d = 768) with a
# 32,768-token vocabulary, in bf16, serving a batch of B = 32 sequences of T = 2048 tokens. Memory is counted
# **for the whole batch**: B caches and one copy of the bank's tables. The figure draws it against the context on
# log axes; the dashed line is the break-even context T = |V|/B, the solid line the current T. Every step of T,
# |V| or B doubles it. The static figure below shows the default setting, and the readout below it the same model
# for one sequence.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.kv_cache import kv_widget

kv_widget(batch=32)

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.kv_cache import kv_figure

from vrs_edu.lab.kv_cache import kv_summary
from vrs_edu.viz.kv_cache import kv_text

fig, s = kv_figure(batch=32)
plt.show()
for batch in (32, 1):
    print(kv_text(kv_summary(batch=batch), 2048))

# %% [markdown]
# ## Reading what a head writes off the token table
#
# In a bank layer the value at position $j$ is $\gamma\,E_v[x_j]$: it depends on the token and nothing else. So a
# head's output at position $i$ is
#
# $$\text{out}_h(i) = \sum_j a^h_{ij}\; \underbrace{W_O^h\,\gamma\,E_v^h[x_j]}_{\mathrm{OV}_h(x_j)},$$
#
# an attention-weighted sum of **rows of one table** $\mathrm{OV}_h$, indexed by token. QK decides *which* tokens'
# rows are summed; *what* they contribute can be read once, for the whole vocabulary, without running the model. In
# an ordinary layer, the value of a token is computed from the stream at its position, so it may change with the
# context; a table of its values is then at best an approximation.
#
# We train a small word model whose last third of layers are bank layers (`x0_mode="bank"`), briefly.

# %%
from dataclasses import replace

import torch

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import train
from vrs_edu.nn import TinyGPT

_, bank_cfg, bank_train = make_run("word-8x64", n_layers=6, x0_mode="bank", steps=150,
                                   batch_size=16, warmup=20, eval_every=150, eval_batches=8)
data = make_token_data(tokenizer="word", vocab_size=2048, block_size=bank_cfg.block_size)
bank_model = TinyGPT(replace(bank_cfg, vocab_size=data.vocab_size))
history = train(bank_model, data, bank_train, progress=False)
bank_layers = bank_model.cfg.resolved_x0_layers()
print(f"bank layers {list(bank_layers)}, {bank_train.steps} steps: "
      f"validation loss {history.val_loss[-1]:.3f} nats")

# %% [markdown]
# First, the values themselves: for every token that occurs several times in a validation batch, how alike are its
# value vectors at its different positions (mean cosine similarity)? In a bank layer they are the same vector by
# construction; in the layer just below, an ordinary one, they *can* depend on the context — the measurement says
# how much they do here.

# %%
import torch.nn.functional as F

x, y = next(data.eval_batches("val", batch_size=8, max_batches=1))
trace = bank_model(x, trace=True).trace


def same_token_value_cosine(v, idx):
    """Mean cosine similarity between the values (all heads concatenated) of equal tokens at
    different positions."""
    v = F.normalize(v.transpose(1, 2).flatten(2).flatten(0, 1), dim=-1)        # (B·T, D)
    ids = idx.flatten()
    sims = []
    for tok in ids.unique():
        rows = v[ids == tok]
        if len(rows) > 1:
            c = rows @ rows.T
            sims.append((c.sum() - c.diagonal().sum()) / (len(rows) * (len(rows) - 1)))
    return float(torch.stack(sims).mean())


cosines = {}
for l in (bank_layers[0] - 1, *bank_layers):
    kind = "bank" if l in bank_layers else "ordinary"
    cosines[l] = same_token_value_cosine(trace[f"blocks.{l}.attn.v"], x)
    print(f"layer {l} ({kind:8s}): same token, different positions → value cosine {cosines[l]:.3f}")
c = cosines[bank_layers[0] - 1]
print(f"the ordinary layer's values of one token are {'nearly' if c > 0.9 else 'far from'} "
      f"one vector (cosine {c:.3f}):\nafter {bank_train.steps} steps its values depend on the "
      f"context {'only a little' if c > 0.9 else 'strongly'};\n"
      "a bank layer's cannot depend on it at all")

# %% [markdown]
# Now the decomposition, checked on the trained model: summing each head's pattern times the rows of its OV table
# gives exactly the layer's attention output.

# %%
layer = bank_layers[-1]
block = bank_model.blocks[layer]
H, Dh = block.attn.n_heads, bank_model.cfg.d_model // block.attn.n_heads
with torch.no_grad():
    E = block.x0.gamma * block.x0.E_v                      # (|V|, D): the layer's values
    W_O = block.attn.o_proj.weight                         # (D, D)
    heads = [slice(h * Dh, (h + 1) * Dh) for h in range(H)]
    ov = torch.stack([E[:, f] @ W_O[:, f].T for f in heads])          # (H, |V|, D)
    pattern = trace[f"blocks.{layer}.attn.pattern"]        # (B, H, T, T)
    from_table = torch.einsum("bhij,bhjd->bid", pattern, ov[:, x].transpose(0, 1))
print(f"layer {layer}: Σ_h Σ_j a_ij · OV_h[x_j] equals the attention output: "
      f"{torch.allclose(from_table, trace[f'blocks.{layer}.attn.out'], atol=1e-5)}")

# %% [markdown]
# So what each head can write is a property of the table. Among the most frequent training tokens, which rows
# write the most (largest $\lVert \mathrm{OV}_h[\text{token}]\rVert$), and which next tokens does that row push up
# when read directly through the unembedding ($W_U\,\mathrm{OV}_h[\text{token}]$, ignoring the final norm's
# rescaling)?

# %%
tok = data.tokenizer
freq = torch.bincount(data.train, minlength=data.vocab_size)
common = freq.argsort(descending=True)[:400]
with torch.no_grad():
    norms = ov[:, common].norm(dim=-1)                     # (H, 400)
    head = int(norms.mean(1).argmax())                     # the head that writes the most
    top = common[norms[head].argsort(descending=True)[:6]]
    promoted = (ov[head, top] @ bank_model.lm_head.weight.T).topk(4, dim=-1).indices
print(f"layer {layer}, head {head} (largest mean row norm {norms[head].mean():.3f} vs "
      f"{norms.mean(1).min():.3f} for the quietest head)")


def short(token: str) -> str:
    """A token as Python writes it, cut to 14 characters (some tokens of the corpus are long runs
    of symbols)."""
    r = repr(token)
    return r if len(r) <= 14 else r[:13] + "…"


print(f"{'token':>14s} {'‖OV row‖':>9s}   promotes")
for t, p in zip(top.tolist(), promoted.tolist()):
    promotes = "  ".join(short(tok.token(i)) for i in p)
    print(f"{short(tok.token(t)):>14s} {ov[head, t].norm():9.3f}   {promotes}")

# %% [markdown]
# A short run gives a rough table; the point is the method: every row above was read off $E_v$, $W_O$ and $W_U$ —
# parameters — not from a forward pass. With V reading x0 through a table, "what does this head write when it
# attends to token *w*?" has one answer per token, which is what makes such layers readable. The QK half still
# decides where each head looks, and that part stays contextual.
#
# ## The course's four questions, answered with its own measurements
#
# Each answer below is computed from a result file made by a `vrs-edu reproduce` command and cites the chapter that
# measured it (`vrs_edu.lab.answers`). A missing file is named with the command that makes it. A fifth entry reads
# the associative-recall task of chapters 03 and 04: the same questions on a task that needs key lookup.

# %%
from vrs_edu.lab.answers import course_answers

for a in course_answers():
    chapters = f"chapter{'s' if ',' in a['chapter'] else ''} {a['chapter']}"
    print(f"Q{a['n']} — {a['title']} ({chapters}): {a['question']}")
    if a["missing"]:
        print(f"    not measured yet: {a['missing']}")
    else:
        print(f"    source: `{a['command']}` ({a['wall_time_s'] / 60:.0f} min)")
        for line in a["lines"]:
            print(f"    {line}")

# %% [markdown]
# **The same four questions, asked of a real decoder** (chapter 08): SmolLM2-135M-Instruct, 30 layers, by
# intervention on its trained weights, not by training (`vrs_edu.lab.real_decoder_readout.course_answers`). Its Q2
# is the post-hoc question: does a decoder trained the standard way already carry only token identity in V?

# %%
from vrs_edu.lab.real_decoder_readout import course_answers as real_decoder_answers

try:
    real_decoder = load_results("real-decoder")
except FileNotFoundError as e:
    print(f"not measured yet: {e}")
else:
    for key, a in real_decoder_answers(real_decoder).items():
        print(textwrap.fill(f"{key.upper()} (chapter 08): {a['sentence']}", 100,
                            subsequent_indent="    "))

# %% [markdown]
# Each line is a test declared before its run, read at *our* scale: its mean and 95 % interval over paired seeds,
# the p-value after Holm's correction within the chapter's family, and the verdict — **reproduced** (the published
# direction), **contradicted** (the opposite direction), or **undecided**, with the power the test had. Chapters
# 03–05 show the curves and the reasoning behind each line; a recall-task line is only about retrieval where its
# precondition (`recall_lookup_learned` for ResFormer, `recall_qkv_lookup_learned` for the x0 shares) is reproduced.
#
# ### Question 1 beside question 4: one question, two instruments
#
# Questions 1 and 4 share a sub-question: do the inputs of V in the deep layers read the token's x0 more than the
# inputs of Q and K do? Chapter 04 answered it with learned coefficients, one pair per path: its test reads
# $\text{share}_v - \max(\text{share}_q, \text{share}_k)$, where a path's share $|\beta| / (|\alpha| + |\beta|)$ is
# the fraction of its input that comes from x0 (tested as V against Q and V against K, apart). Chapter 05 answered it
# from what the routers actually feed each projection: the x0-R² of V's input (the share of its variance that an
# affine map of x0 explains) minus the larger of Q's and K's. Both are differences of fractions, but not of the same
# fractions, so their sizes do not compare; what does is the side of 0 each mean falls on and each verdict that
# counts. Chapter 04 judged its coefficients at three learning rates (×0.25, ×1 and ×4 of the official rates scaled
# to our batch); a row per rate. It reads the same result files as questions 1 and 4 above.

# %%
from vrs_edu.lab.answers import v_reads_x0_side_by_side


def saved(recipe, corpus=None):
    """The recipe's result file, or None when it is not made yet (the lines name its command)."""
    try:
        return load_results(recipe, corpus=corpus)
    except FileNotFoundError:
        return None


print("Do deep V inputs read x0 more than Q's and K's?")
print("Q1 (chapter 04) beside the routers of Q4 (chapter 05):")
for line in v_reads_x0_side_by_side(saved("bank-of-values", verdict_corpus()),
                                    saved("depth-mixers", verdict_corpus())):
    print(f"    {line}")

# %% [markdown]
# How to read the lines after the rows. The first ones give each instrument's side of 0 on its own: chapter 04's
# rates are one instrument read three times, and a count of means across instruments would be a vote. Means on the
# same side of 0 from both instruments agree in direction: a lead for a new declared test, not evidence for or
# against the claim. The claim (V reads x0 more, above 0) is supported in this regime only by verdicts that count:
# decided, in regime, and (for chapter 04) the same at every rate. A counted verdict below 0, from either
# instrument, is evidence against it. Undecided, out-of-regime and rate-dependent verdicts count for neither side,
# whatever the side of their means; the `counted` line names those that do. When chapter 04's mean changes side
# with its rate, the last line says so: it then has no one direction to set beside the routers'.
#
# ## Exercise — estimate a KV cache, then check it against the model
#
# *Difficulty 🔴🔴🔴⚪⚪ · about 15 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number)`: the bytes a decoder keeps for one
# sequence of `seq_len` tokens, for `variant` in `"baseline"`, `"svformer"`, `"bank"` (the bank layers are the last
# third: `n_layers // 3` of them, at least one).


# %%
def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
    """ints n_layers, d_model, seq_len, bytes_per_number; variant 'baseline', 'svformer' or
    'bank' -> int bytes.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch06 import check_kv_cache_bytes

check_kv_cache_bytes(kv_cache_bytes)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
    n_bank = max(1, n_layers // 3)                         # whole layers, at least one
    v_layers = {"baseline": n_layers, "svformer": 1, "bank": n_layers - n_bank}[variant]
    # K in every layer, V where cached
    return (n_layers + v_layers) * d_model * seq_len * bytes_per_number


check_kv_cache_bytes(kv_cache_bytes)

# %%
for r in rows:
    estimate = kv_cache_bytes(r["n_layers"], r["d_model"], r["T"], r["variant"], 4)
    print(f"{r['variant']:9s} T = {r['T']:5d}: your estimate {estimate:8d} B, "
          f"measured cache {r['cache_bytes']:8d} B, equal: {estimate == r['cache_bytes']}")

# %% [markdown]
# ### Exercises to think about
#
# 1. Grouped-query attention shares K *and* V between heads of one layer; SVFormer shares V between layers. Write
#    the bytes per token of a model that does both, and check which saves more at L = 12.
# 2. For one sequence the bank's break-even is T = |V|; for a batch of B sequences, T = |V|/B. Why does a larger
#    vocabulary make the bank *less* attractive for memory? What would have to hold for it to be worth it anyway,
#    and do chapter 04's loss tests show that at our scale?
# 3. The OV table tells what a head writes for each token. What would you still need in order to predict the
#    head's output on a sentence?
#
# ## What we measured
#
# * KV-cache bytes per token from the cache tensors the model builds, for the baseline, SVFormer and the bank of
#   values at three context lengths: equal to the formulas; SVFormer's ratio to the baseline printed above.
# * The bank-of-values saving ΔKV measured and computed with the paper's formula, equal at every length, with its
#   sign change at T = |V| measured on a character vocabulary.
# * Next to it, the quality cost of each reuse from chapters 03–04 (paired over seeds) and its declared test's
#   verdict, when their results exist.
# * In a trained bank layer: values of a token identical across contexts by construction (in the ordinary layer below
#   they were close to one vector too, cosine printed above: context changed them only a little at this scale), the
#   attention output rebuilt exactly from the pattern and a per-token OV table, and the tokens whose rows write the
#   most and what they promote.
# * The course's four questions (and the recall task) answered from the result files of chapters 03, 04 and 05 on
#   the verdict corpus (kjv, read less than once per run), and question 1 set beside question 4: chapter 04's
#   coefficient tests at three coefficient rates and chapter 05's router tests of whether V reads x0 more than Q
#   and K, compared by the side of 0 of each mean and by the verdicts that count (out-of-regime, undecided and
#   rate-dependent ones count for neither side).
#
# **The answer in this regime** (the toys on the verdict corpus, kjv, read less than once per run; chapter 08 asks
# a real decoder), computed from the measurements above:

# %%
from vrs_edu.lab.results import interval


def stored(recipe: str, test: str) -> str:
    """A declared test's stored mean, interval and verdict on the verdict corpus, as a phrase."""
    res = saved(recipe, verdict_corpus())
    rec = {v["name"]: v for v in (res or {}).get("verdicts", [])}.get(test)
    return ("not measured yet" if rec is None
            else f"{interval(rec['mean'], rec['ci'])} nats, {rec['verdict']}")


share = {v: [r["bytes_per_token"] / base[r["T"]] for r in rows if r["variant"] == v][0]
         for v in ("svformer", "bank")}
exact = torch.allclose(from_table, trace[f"blocks.{layer}.attn.out"], atol=1e-5)
say(f"V reuse buys memory, measured on the cache a decoder keeps: SVFormer's is "
    f"{share['svformer']:.0%} of the baseline's at every length, at a loss change of "
    f"{stored('value-residual', 'svformer_cost')}; the bank's is {share['bank']:.0%}, but it keeps "
    f"a table per bank layer, so it saves memory only once the batch's tokens outnumber the "
    f"vocabulary (T > |V|/B), at a loss change of {stored('bank-of-values', 'bank_loss')}. "
    f"Depth-Attention keeps the baseline's cache exactly and changes the loss by "
    f"{stored('v-over-depth', 'depth_attention_loss')}. It buys readability where V is a table: a "
    f"bank layer's output {'equals (to 1e-5)' if exact else 'does not equal'} the pattern times "
    "per-token rows that can be read without running the model, while QK still decides where each "
    "head looks.")
