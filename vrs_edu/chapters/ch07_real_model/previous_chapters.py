"""What chapter 07 reads from earlier chapters, for its notebook — as each chapter of Sebastian Raschka's
*Build a Large Language Model (From Scratch)* takes its predecessors' code from a ``previous_chapters.py``. The
notebook imports its own chapter's package only; this module is its one door to the earlier chapters (the package's
own modules import the earlier chapters they build on directly).

* chapter 02's frozen routing on the toy character model, beside the same measurement on the encoder
  (:func:`vrs_edu.chapters.ch07_real_model.probes.encoder_frozen_routing`), and its pattern and value
  swaps (:func:`vrs_edu.chapters.ch07_real_model.probes.encoder_swap`).
"""
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import (frozen_routing as toy_frozen_routing,
                                                               swap_experiment as toy_swap_experiment)
