"""Chapter 02, QK routes, V carries: swap one half of attention and keep the other; frozen routing; QK and OV
circuits."""
