"""The declared texts the Korean evidence appendices print (each declared test's claim, each precondition's premise)
have a Korean translation made from their current English (vrs_edu.i18n.declared): a declaration whose English
changed after its translation fails here, naming the test and showing the new English, and so does a shown
declaration with no Korean. The declarations themselves are never edited for the translation (they were committed
before the runs)."""
import importlib
import importlib.util
import re
from pathlib import Path

import polib
import pytest

from vrs_edu.i18n import declared
from vrs_edu.lab.analysis import DeclaredTest, Precondition, check_preconditions, format_measured, judge
from vrs_edu.lab.analysis import precondition_lines

ROOT = Path(__file__).resolve().parents[1]
# The notebooks that print declared texts: every evidence appendix that calls format_measured or precondition_lines.
APPENDICES = tuple(p.name for p in sorted((ROOT / "notebooks").glob("0*a_*.py"))
                   if re.search(r"\b(format_measured|precondition_lines)\(", p.read_text(encoding="utf-8")))


def declared_texts(module) -> dict[tuple[str, str], str]:
    """``(name, field) -> English`` of every test and precondition a recipe module declares at module level."""
    out = {}
    for value in vars(module).values():
        for x in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(x, DeclaredTest):
                out[(x.name, "claim")] = x.claim
            elif isinstance(x, Precondition):
                out[(x.name, "premise")] = x.premise
    return out


def shown_modules() -> dict[str, object]:
    """The recipe modules (with declarations) that the evidence appendices import: ``{catalog name: module}``."""
    found = {}
    for nb in APPENDICES:
        for package, names in re.findall(r"^from vrs_edu\.chapters\.(\S+) import (.+)$",
                                         (ROOT / "notebooks" / nb).read_text(encoding="utf-8"), re.M):
            for name in re.findall(r"(\w+)(?: as \w+)?(?:,|$)", names):
                obj = getattr(importlib.import_module(f"vrs_edu.chapters.{package}"), name, None)
                if obj is None and importlib.util.find_spec(f"vrs_edu.chapters.{package}.{name}"):
                    obj = importlib.import_module(f"vrs_edu.chapters.{package}.{name}")
                if getattr(obj, "__file__", None) and declared_texts(obj):
                    found[obj.__name__.removeprefix("vrs_edu.chapters.")] = obj
    return found


def test_the_appendices_show_the_recipes_that_have_catalogs():
    assert APPENDICES == ("03a_value_residual_evidence.py", "04a_bank_of_values_evidence.py")
    assert set(shown_modules()) == {"ch03_value_residual.recipe", "ch03_value_residual.recall",
                                    "ch03_value_residual.depth_sweep", "ch04_bank_of_values.recipe"}


def test_every_shown_declared_text_has_korean():
    problems = [p for name, module in shown_modules().items() for p in declared.missing(name, declared_texts(module))]
    assert not problems, "declared texts with no Korean (add them to vrs_edu/i18n/declared/):\n" + "\n".join(problems)


def test_no_korean_declared_text_fell_behind_its_english():
    problems = [p for name, module in shown_modules().items() for p in declared.stale(name, declared_texts(module))]
    assert not problems, "\n".join(problems)


def test_every_catalog_entry_translates_a_current_declaration():
    """No entry left behind for a test that was renamed or removed (its Korean would never be shown)."""
    modules = shown_modules()
    for path in sorted(declared.CATALOGS.glob("*.po")):
        assert path.stem in modules, f"{path.name}: no appendix shows {path.stem}"
        current = declared_texts(modules[path.stem])
        for entry in polib.pofile(str(path), wrapwidth=0):
            name, field, _ = entry.msgctxt.split(" ")
            assert (name, field) in current, f"{path.name}: {name} {field} is no longer declared"


def _catalog(folder: Path, english: str, korean: str) -> None:
    po = polib.POFile(wrapwidth=0)
    po.append(polib.POEntry(msgctxt=declared.key("gain", "claim", english), msgid=english, msgstr=korean))
    po.save(str(folder / "m.po"))


def test_a_changed_english_is_reported_with_the_test_and_both_texts_and_prints_in_english(tmp_path):
    _catalog(tmp_path, "the method lowers the loss", "이 방법은 손실을 낮춥니다")
    now = {("gain", "claim"): "the method lowers the loss (paper, Table 5)"}
    [message] = declared.stale("m", now, tmp_path)
    assert "m: gain claim changed after its translation" in message
    assert "translated: the method lowers the loss\n" in message
    assert "now:        the method lowers the loss (paper, Table 5)" in message
    assert declared.stale("m", {("gain", "claim"): "the method lowers the loss"}, tmp_path) == []
    table = declared.translations("ko", tmp_path)
    assert now[("gain", "claim")] not in table and table["the method lowers the loss"] == "이 방법은 손실을 낮춥니다"
    assert declared.translations("en", tmp_path) == {}


def test_a_shown_text_without_korean_is_reported(tmp_path):
    _catalog(tmp_path, "the method lowers the loss", "")
    texts = {("gain", "claim"): "the method lowers the loss", ("other", "premise"): "a premise"}
    assert declared.missing("m", texts, tmp_path) == ["m: gain claim has no Korean: the method lowers the loss",
                                                      "m: other premise has no Korean: a premise"]
    assert declared.missing("none", texts, tmp_path)[1] == "none: other premise has no Korean: a premise"
    with pytest.raises(ValueError, match="field"):
        declared.key("gain", "quantity", "x")


def test_a_fuzzy_translation_counts_as_missing_since_it_is_not_printed(tmp_path):
    _catalog(tmp_path, "the method lowers the loss", "이 방법은 손실을 낮춥니다")
    po = polib.pofile(str(tmp_path / "m.po"), wrapwidth=0)
    po[0].flags.append("fuzzy")
    po.save(str(tmp_path / "m.po"))
    texts = {("gain", "claim"): "the method lowers the loss"}
    assert declared.translations("ko", tmp_path) == {}
    assert declared.missing("m", texts, tmp_path) == ["m: gain claim has no Korean: the method lowers the loss"]


def test_the_korean_lists_print_the_catalogs_korean():
    from vrs_edu.chapters.ch03_value_residual import recipe
    gain = next(t for t in recipe.TESTS if t.name == "resformer_loss")
    [row] = judge([gain], {gain.name: [-0.004, -0.016, -0.005, -0.006, -0.004]}, preconditions=recipe.PRECONDITIONS,
                  facts={"sub_epoch": 0.596, "lambdas_plateaued": 0.0, "attention_concentrated": 0.09},
                  seeds=[0, 1, 2, 3, 4])
    first = format_measured([row], lang="ko").split("\n\n")[0]
    assert " ".join(first.split()) == (
        "무시할 만함 resformer_loss — ResFormer(V_n' = 0.5·V_1 + 0.5·V_n)는 같은 스텝에서 검증 손실을 낮춥니다: "
        "82 M에서 −0.027 nats (ResFormer v1, 표 5: 2.7389 → 2.7117)")
    assert format_measured([row], lang="en").splitlines()[0].startswith(
        "NEGLIGIBLE   resformer_loss — ResFormer (V_n' = 0.5·V_1 + 0.5·V_n) lowers the validation loss")
    sub = check_preconditions([recipe.SUB_EPOCH], {"sub_epoch": 0.596})
    assert " ".join(precondition_lines(sub, lang="ko").split()).startswith(
        "sub_epoch 0.596 (필요: < 1): 성립 (뜻: 손실 판정은 학습 텍스트를 외울 수 없는 실행에서 나옵니다")
