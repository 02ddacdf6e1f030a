"""What chapter 04 reads from earlier chapters, for its notebook — as each chapter of Sebastian Raschka's
*Build a Large Language Model (From Scratch)* takes its predecessors' code from a ``previous_chapters.py``. The
notebook imports its own chapter's package only; this module is its one door to the earlier chapters (the package's
own modules import the earlier chapters they build on directly).

* the recall task (chapter 03's recipe ``recall``): its ``qkv`` models have learned key → value lookup, so their x0
  shares and need are read where the deep inputs are mostly context.
"""
from vrs_edu.chapters.ch03_value_residual import recall
