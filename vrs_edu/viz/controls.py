"""What every widget of the course shares: labels that are never cut, and a readout that states the change from the
default setting, so that a small move of a slider is visible even where a curve barely moves."""
from __future__ import annotations

from vrs_edu.i18n.language import resolve_language


def label_style() -> dict:
    """``style=`` for an ipywidgets control: the description gets the width it needs (ipywidgets' default cuts
    labels longer than about 8 characters to ``temperat…``)."""
    return {"description_width": "initial"}


def change_from_default(now: float, default: float, fmt: str = ".3f", unit: str = "",
                        lang: str | None = None) -> str:
    """``"1.115 nats (+0.009 from the default 1.106)"``; ``"(the default)"`` when the setting is the default.
    ``lang``: the edition (``None``: the running notebook's); Korean: ``"1.115 nats (기본값 1.106에서 +0.009)"``,
    ``"(기본값)"``."""
    ko = resolve_language(lang) == "ko"
    if f"{now:{fmt}}" == f"{default:{fmt}}" and now == default:
        return f"{now:{fmt}}{unit} ({'기본값' if ko else 'the default'})"
    if ko:
        return f"{now:{fmt}}{unit} (기본값 {default:{fmt}}에서 {now - default:+{fmt}})"
    return f"{now:{fmt}}{unit} ({now - default:+{fmt}} from the default {default:{fmt}})"
