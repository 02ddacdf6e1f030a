"""Chapter 08, a real 30-layer decoder (SmolLM2-135M): swaps, per-token substitutions, logit lens, the KV price
list (the ``real-decoder`` recipe)."""
