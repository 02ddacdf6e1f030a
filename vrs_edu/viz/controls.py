"""What every widget of the course shares: labels that are never cut, and a readout that states the change from the
default setting, so that a small move of a slider is visible even where a curve barely moves."""
from __future__ import annotations

from vrs_edu.i18n.language import resolve_language


def label_style() -> dict:
    """``style=`` for an ipywidgets control: the description gets the width it needs (ipywidgets' default cuts
    labels longer than about 8 characters to ``temperat…``)."""
    return {"description_width": "initial"}


def change_from_default(now: float, default: float, fmt: str = ".3f", unit: str = "",
                        lang: str | None = "en") -> str:
    """``"1.115 nats (+0.009 from the default 1.106)"``; ``"(the default)"`` when the setting is the default. In
    Korean (``lang="ko"``; None: the running edition) ``"1.115 nats (기본값 1.106에서 +0.009)"`` and ``"(기본값)"``.
    English unless a caller asks, so that the callers written before the Korean edition keep their words."""
    same = f"{now:{fmt}}" == f"{default:{fmt}}" and now == default
    if resolve_language(lang) == "ko":
        return f"{now:{fmt}}{unit} (기본값)" if same else \
            f"{now:{fmt}}{unit} (기본값 {default:{fmt}}에서 {now - default:+{fmt}})"
    if same:
        return f"{now:{fmt}}{unit} (the default)"
    return f"{now:{fmt}}{unit} ({now - default:+{fmt}} from the default {default:{fmt}})"
