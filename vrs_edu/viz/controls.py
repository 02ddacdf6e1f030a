"""What every widget of the course shares: labels that are never cut, and a readout that states the change from the
default setting, so that a small move of a slider is visible even where a curve barely moves."""
from __future__ import annotations


def label_style() -> dict:
    """``style=`` for an ipywidgets control: the description gets the width it needs (ipywidgets' default cuts
    labels longer than about 8 characters to ``temperat…``)."""
    return {"description_width": "initial"}


def change_from_default(now: float, default: float, fmt: str = ".3f", unit: str = "") -> str:
    """``"1.115 nats (+0.009 from the default 1.106)"``; ``"(the default)"`` when the setting is the default."""
    if f"{now:{fmt}}" == f"{default:{fmt}}" and now == default:
        return f"{now:{fmt}}{unit} (the default)"
    return f"{now:{fmt}}{unit} ({now - default:+{fmt}} from the default {default:{fmt}})"
