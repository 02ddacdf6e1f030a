"""Chapter 00, orientation: the residual stream's norm across depth, the course's first widget."""
