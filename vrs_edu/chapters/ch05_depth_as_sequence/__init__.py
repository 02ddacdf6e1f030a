"""Chapter 05, depth as a sequence: depth mixers at equal budget (``depth-mixers``), V over depth
(``v-over-depth``), and ShortSWA over depth (the mechanism: :mod:`vrs_edu.nn.shortswa`)."""
