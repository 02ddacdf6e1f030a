"""Korean particles: moved to :mod:`vrs_edu.i18n.korean` (a bottom layer, so that ``lab``, ``viz`` and the chapter
packages may import it). This name stays for the course layer's older imports."""
from vrs_edu.i18n.korean import attach, last_sound, particle  # noqa: F401
