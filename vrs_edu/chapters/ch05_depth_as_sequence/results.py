"""Chapter 05's stored results, loaded the same way by the chapter and its appendix: the depth mixers'
(``vrs-edu reproduce depth-mixers``) and the reads over depth of V alone (``vrs-edu reproduce v-over-depth``), both on
the verdict corpus, with their declared tests judged by today's rules."""
from __future__ import annotations

from typing import Callable, NamedTuple

from vrs_edu.chapters.ch05_depth_as_sequence import recipe as dm_recipe, v_over_depth as vod_recipe
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.lab.results import Verdict


class DepthResults(NamedTuple):
    """``result`` and ``vod``: the two stored result dicts (None when not made); ``rows``: the depth mixers' judged
    tests; ``vod_rows``: V-over-depth's, by name; ``loss_rows``: the mixers' loss tests (family ``ch05``)."""
    corpus: str
    result: dict | None
    vod: dict | None
    rows: list[Verdict]
    vod_rows: dict[str, Verdict]
    loss_rows: list[Verdict]


def load_depth_results(say: Callable[[str], object] | None = None, out_dir=None) -> DepthResults:
    """Load both results from the verdict corpus and judge their declared tests; a missing file is said with
    ``say`` (naming the command that makes it) and leaves its part None or empty."""
    corpus = verdict_corpus()
    result = load_results_or_none("depth-mixers", corpus=corpus, say=say, out_dir=out_dir)
    vod = load_results_or_none("v-over-depth", corpus=corpus, say=say, out_dir=out_dir)
    rows = dm_recipe.verdicts(result) if result is not None else []
    vod_rows = {r.test.name: r for r in vod_recipe.verdicts(vod)} if vod is not None else {}
    return DepthResults(corpus, result, vod, rows, vod_rows, [r for r in rows if r.test.family == "ch05"])
