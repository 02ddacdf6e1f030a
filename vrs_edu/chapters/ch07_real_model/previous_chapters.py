"""What chapter 07 reads from earlier chapters, in one place — as each chapter of LLMs-from-scratch takes its
predecessors' code from a ``previous_chapters.py``: the notebook imports its own chapter only.

* chapter 02's frozen routing on the toy character model, beside the same measurement on the encoder
  (:func:`vrs_edu.chapters.ch07_real_model.probes.encoder_frozen_routing`), and its pattern and value
  swaps (:func:`vrs_edu.chapters.ch07_real_model.probes.encoder_swap`).
"""
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import (frozen_routing as toy_frozen_routing,
                                                               swap_experiment as toy_swap_experiment)
