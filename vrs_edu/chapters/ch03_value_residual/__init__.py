"""Chapter 03, value residual learning: ResFormer, SVFormer, NeuTRENO against the strong baseline (the
``value-residual`` recipe), the same at 4-16 layers (``depth-sweep``), and their prose."""
