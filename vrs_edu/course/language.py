"""The running edition: moved to :mod:`vrs_edu.i18n.language` (a bottom layer, so that ``lab``, ``viz`` and the
chapter packages may import it). This name stays for the course layer's older imports."""
from vrs_edu.i18n.language import (ENV_VAR, LANGUAGES, MARKER, check_language, current_language,  # noqa: F401
                                   in_language, resolve_language)
