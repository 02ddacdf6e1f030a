"""Chapter 04, x0 and the bank of values: what deep layers re-read of the token embedding through Q, K and V
(the ``bank-of-values`` recipe; the recall task, ``recall``, whose models have learned lookup)."""
