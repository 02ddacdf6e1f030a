"""What chapter 04 reads from earlier chapters, in one place — as each chapter of LLMs-from-scratch takes its
predecessors' code from a ``previous_chapters.py``: the notebook imports its own chapter only.

* the recall task (chapter 03's recipe ``recall``): its ``qkv`` models have learned key → value lookup, so their x0
  shares and need are read where the deep inputs are mostly context.
"""
from vrs_edu.chapters.ch03_value_residual import recall
