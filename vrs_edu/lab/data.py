"""Corpora, tokenizers, batches and synthetic tasks.

Default corpus: the Python reference documentation that ships with every Python installation
(``pydoc_data.topics``, ~465 k characters of real English technical prose), so the course runs offline with
nothing to download. Any UTF-8 text file can replace it (:func:`load_corpus`).

Tokenizers (pick per chapter what makes the mechanism visible):

* ``char``: one token per character (vocab ~100). Good for watching attention patterns on readable text; but a
  character carries little identity worth re-reading, so the x0 / value findings hardly show (pilot runs on this
  CPU: with char tokens the learned x0 coefficients of Q and V came out alike; with word tokens V's was the largest).
* ``word``: a word-level vocabulary of the most frequent words and punctuation (HF ``tokenizers`` WordLevel),
  rare words -> ``[UNK]``. Each token *is* an identity; chapters 03–05 use it.
* ``bpe``: byte-level BPE trained on the corpus with HF ``tokenizers`` in about a second.

Synthetic tasks isolate a mechanism: :func:`associative_recall` (keys need context, values need token identity) and
:func:`induction_copy` (repeat a random sequence: needs an induction head).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from pydoc_data.topics import topics

import torch
from jaxtyping import Int
from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, trainers
from torch import Tensor

TOKENIZERS = ("char", "word", "bpe")


def default_corpus_text() -> str:
    """The Python reference documentation (``pydoc_data.topics``), topics joined in sorted-key order."""
    return "\n\n".join(topics[k] for k in sorted(topics))


def load_corpus(path: str | Path | None = None) -> str:
    """Read a UTF-8 text file, or the default corpus when ``path`` is None.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is empty or not valid UTF-8 (the message names the file and the byte offset).
    """
    if path is None:
        return default_corpus_text()
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"corpus {path} is not UTF-8 text (bad byte at offset {e.start})") from None
    if not text.strip():
        raise ValueError(f"corpus {path} is empty")
    return text


class Tokenizer:
    """A thin wrapper with one interface for the three kinds: ``encode(str) -> list[int]``, ``decode``,
    ``vocab_size``, ``token(i)`` (the string of one id), ``to_json`` / ``from_json`` for checkpoints."""

    def __init__(self, kind: str, hf=None, chars: list[str] | None = None):
        self.kind, self.hf, self.chars = kind, hf, chars
        if kind == "char":
            self.stoi = {c: i for i, c in enumerate(chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars) if self.kind == "char" else self.hf.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        if self.kind == "char":
            missing = sorted(set(text) - set(self.stoi))
            if missing:
                raise ValueError(f"characters not in the tokenizer's vocabulary: {missing[:10]}")
            return [self.stoi[c] for c in text]
        return self.hf.encode(text).ids

    def decode(self, ids) -> str:
        ids = [int(i) for i in ids]
        if self.kind == "char":
            return "".join(self.chars[i] for i in ids)
        return self.hf.decode(ids)

    def token(self, i: int) -> str:
        """The surface string of one token id (for plots and tables)."""
        return self.chars[int(i)] if self.kind == "char" else self.hf.id_to_token(int(i))

    def to_json(self) -> str:
        if self.kind == "char":
            return json.dumps({"kind": "char", "chars": self.chars})
        return json.dumps({"kind": self.kind, "hf": self.hf.to_str()})

    @classmethod
    def from_json(cls, s: str) -> "Tokenizer":
        d = json.loads(s)
        if d["kind"] == "char":
            return cls("char", chars=d["chars"])
        return cls(d["kind"], hf=HFTokenizer.from_str(d["hf"]))


def train_tokenizer(text: str, kind: str = "char", vocab_size: int = 2048) -> Tokenizer:
    """Build a tokenizer from ``text``. ``vocab_size`` is ignored for ``char``.

    Raises:
        ValueError: an unknown kind, or ``vocab_size`` < 16 for word/bpe.
    """
    if kind not in TOKENIZERS:
        raise ValueError(f"tokenizer kind must be one of {TOKENIZERS}, got {kind!r}")
    if kind == "char":
        return Tokenizer("char", chars=sorted(set(text)))
    if vocab_size < 16:
        raise ValueError(f"vocab_size must be >= 16 for a {kind} tokenizer, got {vocab_size}")

    if kind == "word":
        tok = HFTokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()  # words and punctuation runs
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"])
        tok.decoder = decoders.WordPiece(prefix="##")  # joins with spaces
    else:
        tok = HFTokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(text.split("\n\n"), trainer=trainer)
    return Tokenizer(kind, hf=tok)


@dataclass
class TokenData:
    """A tokenised corpus split deterministically: the first ``1 - val_fraction`` for training, the rest for
    validation (a contiguous tail, so no validation text leaks into training windows)."""

    train: Int[Tensor, "N"]
    val: Int[Tensor, "M"]
    tokenizer: Tokenizer
    block_size: int

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """Random windows (B, T) of inputs and next-token targets, drawn with ``generator`` (repeatable)."""
        data = self._split(split)
        ix = torch.randint(len(data) - self.block_size - 1, (batch_size,), generator=generator)
        x = torch.stack([data[i:i + self.block_size] for i in ix.tolist()])
        y = torch.stack([data[i + 1:i + 1 + self.block_size] for i in ix.tolist()])
        return x, y

    def eval_batches(self, split: str = "val", batch_size: int = 32, max_batches: int | None = None):
        """Consecutive non-overlapping windows covering the split (the whole split when ``max_batches`` is None)."""
        data = self._split(split)
        T = self.block_size
        n = (len(data) - 1) // T
        starts = torch.arange(n) * T
        if max_batches is not None:
            starts = starts[: max_batches * batch_size]
        for i in range(0, len(starts), batch_size):
            s = starts[i:i + batch_size].tolist()
            yield (torch.stack([data[j:j + T] for j in s]), torch.stack([data[j + 1:j + 1 + T] for j in s]))

    def _split(self, split: str) -> Tensor:
        if split not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {split!r}")
        return self.train if split == "train" else self.val


def make_token_data(text: str | None = None, tokenizer: str | Tokenizer = "char", vocab_size: int = 2048,
                    block_size: int = 64, val_fraction: float = 0.1) -> TokenData:
    """Tokenise a corpus (default: :func:`default_corpus_text`) and split it.

    Raises:
        ValueError: ``val_fraction`` outside (0, 0.5], or a split shorter than one block plus one token.
    """
    if not 0 < val_fraction <= 0.5:
        raise ValueError(f"val_fraction must be in (0, 0.5], got {val_fraction}")
    text = default_corpus_text() if text is None else text
    tok = tokenizer if isinstance(tokenizer, Tokenizer) else train_tokenizer(text, tokenizer, vocab_size)
    ids = torch.tensor(tok.encode(text), dtype=torch.long)
    n_val = int(len(ids) * val_fraction)
    train, val = ids[: len(ids) - n_val], ids[len(ids) - n_val:]
    for name, part in (("training", train), ("validation", val)):
        if len(part) < block_size + 2:
            raise ValueError(f"the corpus is too short: its {name} split has {len(part)} tokens, "
                             f"fewer than one block (block_size={block_size}) plus one")
    return TokenData(train, val, tok, block_size)


def unigram_loss(data: TokenData) -> float:
    """Cross-entropy (nats) of the best context-free predictor: training-split unigram frequencies, scored on
    the validation split (add-one smoothing). A model must beat this to have learned anything from context."""
    counts = torch.bincount(data.train, minlength=data.vocab_size).double() + 1
    logp = (counts / counts.sum()).log()
    return float(-logp[data.val].mean())


# ---------------------------------------------------------------------------------------------------------------
# Synthetic tasks


@dataclass
class SyntheticTask:
    """A generator of (inputs, targets, mask) batches; ``mask`` marks the positions that are scored."""

    name: str
    vocab_size: int
    block_size: int
    make: callable

    def batch(self, batch_size: int, generator: torch.Generator):
        return self.make(batch_size, generator)


def _recall_batch(B: int, g: torch.Generator, *, n_pairs: int, n_key_symbols: int, n_value_symbols: int,
                  key_len: int, n_queries: int, with_replacement: bool):
    """One batch of :func:`associative_recall` (module level, so that a task can be sent to a worker
    process: ``vrs-edu reproduce --jobs``)."""
    sep = n_key_symbols + n_value_symbols  # the separator: the last token id
    keys = torch.stack([_distinct_keys(n_pairs, n_key_symbols, key_len, g) for _ in range(B)])  # (B, P, K)
    vals = n_key_symbols + torch.randint(n_value_symbols, (B, n_pairs), generator=g)
    ctx = torch.cat([keys, vals[..., None]], -1).flatten(1)
    if with_replacement:
        qi = torch.randint(n_pairs, (B, n_queries), generator=g)
    else:
        qi = torch.stack([torch.randperm(n_pairs, generator=g)[:n_queries] for _ in range(B)])
    qk = torch.gather(keys, 1, qi[..., None].expand(-1, -1, key_len))
    qv = torch.gather(vals, 1, qi)
    query = torch.cat([qk, qv[..., None]], -1).flatten(1)
    seq = torch.cat([ctx, torch.full((B, 1), sep), query], 1)
    x, y = seq[:, :-1], seq[:, 1:]
    mask = torch.zeros_like(y, dtype=torch.bool)
    first_answer = n_pairs * (key_len + 1) + 1 + key_len - 1  # target index of the first answer
    mask[:, first_answer::key_len + 1] = True
    return x, y, mask


def associative_recall(n_pairs: int = 8, n_key_symbols: int = 8, n_value_symbols: int = 16, key_len: int = 2,
                       n_queries: int = 4, with_replacement: bool = False) -> SyntheticTask:
    """Multi-query associative recall: ``k1 v1 k2 v2 ... | q1 a1 q2 a2 ...``.

    Keys are ``key_len`` tokens long (so a key is only identified by *context*: the tokens before it), values are
    single tokens (a value is *token identity*). After the separator, a key is repeated and the model must emit its
    value. Vocabulary: key symbols, then value symbols, then the separator. Only answer positions are scored.

    Queries are distinct pairs (``with_replacement=False``) or drawn independently (``True``). With distinct queries
    and ``n_queries == n_pairs`` the task needs no lookup at all: answering "a context value not yet given" gets the
    last query right for free (see :func:`no_lookup_reference`). Fewer queries than pairs leaves *distractor* values
    in the context that are never asked for; drawing with replacement makes elimination useless.
    Raises ValueError when distinct queries outnumber the pairs.
    """
    if not with_replacement and n_queries > n_pairs:
        raise ValueError(f"n_queries={n_queries} distinct queries need n_pairs >= n_queries, got n_pairs={n_pairs}")
    V = n_key_symbols + n_value_symbols + 1
    T = n_pairs * (key_len + 1) + 1 + n_queries * (key_len + 1)

    make = functools.partial(_recall_batch, n_pairs=n_pairs, n_key_symbols=n_key_symbols,
                             n_value_symbols=n_value_symbols, key_len=key_len, n_queries=n_queries,
                             with_replacement=with_replacement)
    return SyntheticTask("associative_recall", V, T - 1, make)


def recall_layout(n_pairs: int, key_len: int = 2, **_) -> dict:
    """Where things sit in an :func:`associative_recall` input ``x`` (length T − 1): ``value_positions`` (the context
    values, in x), ``answer_targets`` (the target indices of the answers, in y; answer q is ``y[:, answer_targets[q]]``).
    """
    stride = key_len + 1
    first_answer = n_pairs * stride + 1 + key_len - 1
    return {"value_positions": [p * stride + key_len for p in range(n_pairs)], "first_answer": first_answer,
            "stride": stride}


def no_lookup_reference(n_pairs: int, n_key_symbols: int, n_value_symbols: int, key_len: int = 2,
                        n_queries: int = 4, with_replacement: bool = False, n_sequences: int = 20_000,
                        seed: int = 0) -> dict:
    """The best strategy that never looks a key up: it knows the context values and the answers already given, not
    which key holds which value. For distinct queries each remaining pair is equally likely to be asked next, so it
    predicts ``P(v) = (count of v among the not-yet-answered pairs) / (pairs left)`` (elimination); for queries with
    replacement ``P(v) = count of v in the context / n_pairs``. Scored on ``n_sequences`` sequences of the task.

    Returns ``{"loss", "acc", "loss_by_query", "acc_by_query"}``: cross-entropy (nats) of the true answer and the
    expected accuracy of the argmax (ties split evenly), overall and per query index (1st answer, 2nd, ...).
    A trained model that does not beat this has not shown key → value retrieval.
    """
    task = associative_recall(n_pairs, n_key_symbols, n_value_symbols, key_len, n_queries, with_replacement)
    x, y, mask = task.batch(n_sequences, torch.Generator().manual_seed(seed))
    lay = recall_layout(n_pairs, key_len)
    ctx = x[:, lay["value_positions"]] - n_key_symbols                        # (N, P) context values
    # counts of each value in the context, (N, n_value_symbols); scatter_add rather than one_hot(...).sum(1), which
    # would first build an (N, P, n_value_symbols) int64 tensor (12.8 GB for 4,000 sequences of 100,000 values)
    ones = torch.ones_like(ctx, dtype=torch.float64)
    counts = torch.zeros(n_sequences, n_value_symbols, dtype=torch.float64).scatter_add_(1, ctx, ones)
    answers = y[mask].view(n_sequences, n_queries) - n_key_symbols           # (N, Q)
    losses, accs = [], []
    for q in range(n_queries):
        p = counts / counts.sum(-1, keepdim=True)
        truth = answers[:, q]
        p_true = p.gather(1, truth[:, None]).squeeze(1)
        losses.append(float(-p_true.clamp_min(1e-300).log().mean()))
        top = p == p.max(-1, keepdim=True).values
        hit = top.gather(1, truth[:, None]).squeeze(1).double() / top.sum(-1)
        accs.append(float(hit.mean()))
        if not with_replacement:   # the answered pair is used up: one count less for its value
            counts = counts.scatter_add(1, truth[:, None], -ones[:, :1])
    return {"loss": sum(losses) / n_queries, "acc": sum(accs) / n_queries, "loss_by_query": losses,
            "acc_by_query": accs}


def _distinct_keys(n: int, n_symbols: int, key_len: int, g: torch.Generator) -> Tensor:
    if n > n_symbols ** key_len:
        raise ValueError(f"cannot draw {n} distinct keys from {n_symbols}**{key_len} combinations")
    codes = torch.randperm(n_symbols ** key_len, generator=g)[:n]
    digits = [(codes // n_symbols ** i) % n_symbols for i in reversed(range(key_len))]
    return torch.stack(digits, -1)


def induction_copy(length: int = 16, vocab_size: int = 32) -> SyntheticTask:
    """A random sequence of ``length`` tokens followed by itself: the second half is predictable only by
    looking back (an induction head). Only the second half is scored (its first token excepted)."""

    def make(B: int, g: torch.Generator):
        s = torch.randint(vocab_size, (B, length), generator=g)
        seq = torch.cat([s, s], 1)
        x, y = seq[:, :-1], seq[:, 1:]
        mask = torch.zeros_like(y, dtype=torch.bool)
        mask[:, length:] = True
        return x, y, mask

    return SyntheticTask("induction_copy", vocab_size, 2 * length - 1, make)
