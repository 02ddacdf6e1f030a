"""What the first cell of every chapter calls: seeds, threads, plotting style, and the environment check."""
from __future__ import annotations

from importlib import metadata

from vrs_edu.course.seeds import seed_everything
from vrs_edu.viz.plots import apply_course_style

REQUIRED = {  # package (distribution name, here also its import name) -> minimum version
    "torch": "2.4", "numpy": "1.26", "matplotlib": "3.8", "seaborn": "0.13", "ipywidgets": "8.1",
    "jupytext": "1.16", "nbval": "0.11", "einops": "0.8", "safetensors": "0.4", "tokenizers": "0.20", "tqdm": "4.66",
}


def setup_notebook(seed: int = 0) -> None:
    """Seeds and threads (:func:`vrs_edu.course.seeds.seed_everything`: ``VRS_EDU_THREADS``, set by ``make
    notebooks`` and the tests so that stored outputs are reproducible), and one plotting style for the whole course
    (:func:`vrs_edu.viz.plots.apply_course_style`: every text of a figure 12 pt or more, figures at 80 dpi)."""
    seed_everything(seed)
    apply_course_style()


def _version_tuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def check_environment(required: dict[str, str] = REQUIRED) -> dict[str, str]:
    """Look up every required package's installed version (its distribution's metadata: nothing is imported) and
    compare it with the minimum.

    Returns ``{package: version}``. Raises RuntimeError listing *every* missing or too-old package (with the
    version found and the one needed) and the command that fixes it.
    """
    found, problems = {}, []
    for name, minimum in required.items():
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name}: not installed (need >= {minimum})")
            continue
        found[name] = version
        if _version_tuple(version) < _version_tuple(minimum):
            problems.append(f"{name}: version {version} is too old (need >= {minimum})")
    if problems:
        raise RuntimeError("the course's environment is incomplete:\n  " + "\n  ".join(problems)
                           + "\nfix: run `make lab` (or `pip install -e '.[notebooks,test]'`) from the repository root")
    return found
