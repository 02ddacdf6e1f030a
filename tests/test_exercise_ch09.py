"""Chapter 09's exercise checker: the reference passes, a stub gets "not implemented yet" and a hint, and each known
mistake is named."""
from vrs_edu.course.exercises import ch09
from vrs_edu.lab.answers import combine_arm_verdicts


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
