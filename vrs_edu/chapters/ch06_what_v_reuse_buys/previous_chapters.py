"""What chapter 06 reads from earlier chapters, for its notebook — as each chapter of Sebastian Raschka's
*Build a Large Language Model (From Scratch)* takes its predecessors' code from a ``previous_chapters.py``. The
notebook imports its own chapter's package only; this module is its one door to the earlier chapters (the package's
own modules import the earlier chapters they build on directly).

The verdicts of the experiments whose V reuse this chapter prices, judged now with their current declarations:
SVFormer (chapter 03), the bank of values (chapter 04) and Depth-Attention (chapter 05).
"""
from vrs_edu.chapters.ch03_value_residual.recipe import verdicts as value_residual_verdicts
from vrs_edu.chapters.ch04_bank_of_values.recipe import verdicts as bank_of_values_verdicts
from vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth import verdicts as v_over_depth_verdicts
