"""Chapter 08's decoder against Hugging Face's, measured side by side on one thread.

* MiniLlama's forward pass (nobody listens: fused attention) vs ``transformers.LlamaForCausalLM``'s, both loaded
  from the same GGUF file in float32, on the same token ids: target ratio <= 1.05.
* MiniLlama recording a full trace (every hook point: the explicit attention path, each tensor copied) vs its plain
  forward: the price of the hooks, printed.
* The same two in bfloat16, printed for comparison (the recipe runs in float32: without AMX units bfloat16 is the
  slower type, and its CPU rounding differs by instruction set); and the load times.
Each configuration is timed in interleaved rounds and the median is reported, with the load average.
"""
from __future__ import annotations

import statistics
import time

import torch

from vrs_edu.bench.training import load_average
from vrs_edu.chapters.ch08_real_decoder.model import DecoderMissing, checked_gguf, load_tokenizer
from vrs_edu.nn.llama import MiniLlama


def _median_times(fns: dict, rounds: int) -> dict[str, float]:
    for fn in fns.values():   # warm-up
        fn()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def run(args) -> None:
    try:
        path = checked_gguf()
        import transformers
    except (DecoderMissing, ImportError) as e:
        print(f"skipped: {e}")
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        transformers.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        t0 = time.perf_counter()
        ours = MiniLlama.from_gguf(path)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        hf = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                               dtype=torch.float32).eval()
        t_hf = time.perf_counter() - t0
        t0 = time.perf_counter()
        load_tokenizer(path)
        t_tok = time.perf_counter() - t0
        quick = getattr(args, "quick", False)
        B, T, rounds = (2, 64, 3) if quick else (4, 128, 7)
        x = torch.randint(ours.cfg.vocab_size, (B, T), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            t = _median_times({"MiniLlama": lambda: ours(x), "LlamaForCausalLM": lambda: hf(x),
                               "MiniLlama, full trace": lambda: ours(x, trace=True)}, rounds)
            ours.to(torch.bfloat16)
            hf.to(torch.bfloat16)
            t16 = _median_times({"MiniLlama": lambda: ours(x), "LlamaForCausalLM": lambda: hf(x),
                                 "MiniLlama, full trace": lambda: ours(x, trace=True)}, rounds)
    finally:
        torch.set_num_threads(threads)
    print(f"SmolLM2-135M-Instruct (GGUF, dequantised), B={B} T={T}, 1 thread; median of {rounds} interleaved "
          f"rounds; {load_average()}")
    print(f"  load: MiniLlama.from_gguf {t_ours:.1f} s, LlamaForCausalLM.from_pretrained(gguf_file) {t_hf:.1f} s, "
          f"tokenizer {t_tok:.1f} s")
    for label, tt in (("float32", t), ("bfloat16", t16)):
        print(f"  {label}: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in tt.items()))
        target = "  (target <= 1.05)" if label == "float32" else ""
        print(f"  {label} ratio MiniLlama / LlamaForCausalLM:  {tt['MiniLlama'] / tt['LlamaForCausalLM']:.3f}"
              f"{target}")
        print(f"  {label} ratio full trace / plain forward:    {tt['MiniLlama, full trace'] / tt['MiniLlama']:.3f}")
