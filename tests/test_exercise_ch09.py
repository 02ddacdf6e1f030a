"""Chapter 09's exercise checker: the reference passes, a stub gets "not implemented yet" and a hint, and each known
mistake is named."""
from vrs_edu.course.exercises import ch09
from vrs_edu.chapters.ch09_the_four_answers.answers import combine_arm_verdicts


def test_the_reference_passes(capsys):
    assert ch09.check_swept_verdict(combine_arm_verdicts) is True
    assert "public checks passed" in capsys.readouterr().out


def test_a_stub_gets_the_hint(capsys):
    def stub(verdicts):
        raise NotImplementedError

    assert ch09.check_swept_verdict(stub) is False
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "Hint: " in out


def test_each_known_mistake_is_named(capsys):
    for fn, hint in ch09.MISTAKES:
        assert ch09.check_swept_verdict(fn) is False
        assert hint.split(":")[0][:40] in " ".join(capsys.readouterr().out.split())


def test_an_unknown_wrong_answer_names_the_expected_verdict(capsys):
    assert ch09.check_swept_verdict(lambda v: "reproduced") is False
    assert "expected 'contradicted', got 'reproduced'" in capsys.readouterr().out


def test_the_cases_cover_the_new_arm_rule():
    """Review 3, H2: only opposite decided directions are rate-dependent; an undecided, negligible or unjudged arm
    beside decided ones is undecided; nothing judged is out of regime."""
    got = {tuple(c): combine_arm_verdicts(list(c)) for c in ch09.CASES}
    assert got[("reproduced", "undecided", "reproduced")] == "undecided"
    assert got[("contradicted", "undecided", "reproduced")] == "rate-dependent"
    assert got[("negligible", "reproduced", "reproduced")] == "undecided"
    assert got[("out of regime", "reproduced", "out of regime")] == "undecided"
    assert got[("out of regime", "reproduced", "contradicted")] == "rate-dependent"
    assert got[("n/a", "n/a", "out of regime")] == "out of regime"
    assert got[("negligible",) * 3] == "negligible"


def test_the_old_rule_is_named_as_the_mistake_it_now_is(capsys):
    """The rule chapter 09 taught before review 3 (any judged disagreement is rate-dependent) fails on a claim
    reproduced at two rates and undecided at the third, and the message says why."""
    assert ch09.check_swept_verdict(ch09._any_difference) is False
    out = " ".join(capsys.readouterr().out.split())
    assert "case 3: you called every disagreement rate-dependent" in out
    assert "only arms decided in opposite directions" in out
