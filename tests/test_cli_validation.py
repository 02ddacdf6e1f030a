"""Bad command-line input: every argument is checked before any work starts, and refused with one line that names
the argument, what was given and what is expected (argparse's style: ``prog: error: argument --x: ...``, exit 2,
no traceback).

Each case runs the real parser (``vrs_edu.cli.parse_args``) — the commands themselves never start — and a few run
``python -m vrs_edu.cli`` as a user would.
"""
import os
import subprocess
import sys

import pytest

from vrs_edu.cli import parse_args


@pytest.fixture
def files(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text("hello world\n")
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\xff\xfe\x00 not utf-8 \xc3")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    return {"text": str(text), "binary": str(binary), "file": str(a_file), "dir": str(empty), "tmp": tmp_path,
            "missing": str(tmp_path / "no_such_thing")}


def refused(capsys, argv) -> str:
    """The one error line for ``argv``; fails if the arguments were accepted."""
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: vrs-edu"), err
    assert "Traceback" not in "\n".join(err)
    return err[-1]


CASES = [
    # (kind, argv with placeholders, the error line: the argument, what was given, what is expected)
    ("missing", ["train", "--corpus", "{missing}"], "argument --corpus: '{missing}' does not exist"),
    ("directory", ["train", "--corpus", "{dir}"], "argument --corpus: '{dir}' is a directory; expected a UTF-8 text file"),
    ("unreadable", ["train", "--corpus", "{binary}"],
     "argument --corpus: '{binary}' is not UTF-8 text (byte 0); expected a UTF-8 text file"),
    ("wrong type", ["train", "--steps", "abc"], "argument --steps: 'abc' is not a whole number >= 1"),
    ("wrong type", ["train", "--steps", "0"], "argument --steps: '0' is not a whole number >= 1"),
    ("wrong type", ["train", "--set", "steps=abc"], "argument --set: 'steps=abc': steps takes a whole number, got 'abc'"),
    ("wrong type", ["train", "--set", "nonsense=1"], "argument --set: 'nonsense=1': unknown setting 'nonsense'; expected one of"),
    ("wrong type", ["train", "--set", "steps"], "argument --set: 'steps' is not KEY=VALUE (e.g. value_residual=resformer)"),
    ("wrong type", ["train", "--preset", "huge"], "argument --preset: unknown preset 'huge'; expected one of"),
    ("wrong type", ["train", "--device", "gpu"], "argument --device: 'gpu' is not a device; expected auto, cpu, cuda"),
    ("unwritable output", ["train", "--out", "{file}"],
     "argument --out: '{file}' is an existing file; expected a folder (existing or to be created)"),
    ("unwritable output", ["train", "--out", "{file}/sub"],
     "argument --out: '{file}/sub' is inside '{file}', which is a file; expected a folder"),
    ("unwritable output", ["train", "--out", "/proc/vrs-edu-test"], "argument --out: cannot write into '/proc/vrs-edu-test'"),
    ("combination", ["train", "--set", "n_heads=5"],
     "argument --set: 'n_heads=5': preset 'char-6x64': d_model=64 is not divisible by n_heads=5"),
    ("wrong value", ["train", "--set", "steps=-5"], "argument --set: 'steps=-5': preset 'char-6x64': steps must be >= 1, got -5"),
    ("wrong value", ["train", "--set", "lr=-1"], "argument --set: 'lr=-1': preset 'char-6x64': lr must be > 0, got -1"),
    ("combination", ["train", "--preset", "tiny", "--set", "d_model=40", "--set", "n_heads=16", "--steps", "5"],
     "argument --preset/--set: preset 'tiny' with d_model=40, n_heads=16, --steps 5: d_model=40 is not divisible by "
     "n_heads=16"),
    ("wrong value", ["reproduce", "value-residual", "--set", "steps=-5"], "argument --set: 'steps=-5': steps must be >= 1"),
    ("combination", ["train", "--resume"], "--resume and --checkpoint-every need --checkpoint-dir (or --out)"),
    ("missing", ["reproduce", "no-such-recipe"], "argument name: unknown recipe 'no-such-recipe'; expected one of list,"),
    ("wrong type", ["reproduce", "value-residual", "--seeds", "1,x"],
     "argument --seeds: '1,x' is not a comma-separated list of whole numbers (e.g. 0,1,2)"),
    ("wrong type", ["reproduce", "value-residual", "--set", "lr=fast"], "argument --set: 'lr=fast': lr takes a number, got 'fast'"),
    ("repeated", ["reproduce", "value-residual", "--seeds", "1,1"],
     "argument --seeds: '1,1' repeats seed 1; expected distinct seeds (e.g. 0,1,2): a repeated seed trains the same run twice"),
    ("repeated", ["reproduce", "value-residual", "--seeds", "0,2,1,2"], "argument --seeds: '0,2,1,2' repeats seed 2"),
    ("wrong type", ["reproduce", "value-residual", "--jobs", "0"], "argument --jobs: '0' is not a whole number >= 1"),
    ("wrong type", ["reproduce", "value-residual", "--jobs", "two"], "argument --jobs: 'two' is not a whole number >= 1"),
    ("wrong value", ["reproduce", "value-residual", "--preset", "tiny", "--set", "steps=-5"],
     "argument --set: 'steps=-5': preset 'tiny': steps must be >= 1, got -5"),
    ("wrong type", ["reproduce", "value-residual", "--checkpoint-every", "-3"],
     "argument --checkpoint-every: '-3' is not a whole number >= 1"),
    ("unwritable output", ["reproduce", "value-residual", "--out", "{file}"], "argument --out: '{file}' is an existing file"),
    ("unwritable output", ["reproduce", "value-residual", "--checkpoint-dir", "{file}"],
     "argument --checkpoint-dir: '{file}' is an existing file"),
    ("missing", ["assignments", "grade", "{missing}"], "argument submissions: '{missing}' does not exist"),
    ("directory", ["assignments", "grade", "{dir}"],
     "argument submissions: '{dir}' holds no .ipynb file; expected notebooks or folders of notebooks"),
    ("missing", ["assignments", "list", "--sources", "{missing}"], "argument --sources: '{missing}' does not exist"),
    ("directory", ["assignments", "build", "--sources", "{file}"], "argument --sources: '{file}' is a file; expected a folder"),
    ("wrong type", ["assignments", "grade", "{text}", "--timeout", "soon"],
     "argument --timeout: 'soon' is not a number of seconds > 0"),
    ("wrong type", ["assignments", "grade", "{text}", "--total-timeout", "-1"],
     "argument --total-timeout: '-1' is not a number of seconds > 0"),
    ("wrong type", ["assignments", "grade", "{text}", "--assignment", "99_nothing"],
     "argument --assignment: unknown assignment '99_nothing'; expected one of 00_stream_norms"),
    ("combination", ["assignments", "grade", "{text}", "{binary}", "--student", "ann"],
     "argument --student: names one submission, but 2 were given"),
    ("unwritable output", ["assignments", "grade", "{text}", "--out", "{file}"], "argument --out: '{file}' is an existing file"),
    ("unwritable output", ["assignments", "build", "--out", "/proc/vrs-edu-test"],
     "argument --out: cannot write into '/proc/vrs-edu-test'"),
]


@pytest.mark.parametrize("kind, argv, expected", CASES, ids=[f"{c[1][0]}-{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_refused_before_any_work_with_one_line_naming_the_argument(capsys, files, kind, argv, expected):
    argv = [a.format(**files) for a in argv]
    line = refused(capsys, argv)
    command = " ".join(a for a in argv[:2] if not a.startswith(("-", "/")) and a in ("train", "reproduce",
                                                                                    "assignments", "grade", "list",
                                                                                    "build"))
    assert line.startswith(f"vrs-edu {command}: error: "), line
    assert expected.format(**files) in line, line


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes whatever the permission bits say")
def test_permission_bits_are_honoured_for_an_ordinary_user(capsys, files):
    secret = files["tmp"] / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    locked = files["tmp"] / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    assert "is not readable (permission denied)" in refused(capsys, ["train", "--corpus", str(secret)])
    assert "cannot write into" in refused(capsys, ["train", "--out", str(locked / "run")])


def test_a_refused_setting_is_named_as_typed_and_no_other_setting_is_blamed(capsys):
    line = refused(capsys, ["train", "--set", "steps=-5"])
    assert "batch_size" not in line and "--set" in line and "steps" in line, line
    line = refused(capsys, ["train", "--set", "batch_size=0", "--set", "steps=10"])
    assert line.endswith("argument --set: 'batch_size=0': preset 'char-6x64': batch_size must be >= 1, got 0"), line


def test_good_input_is_accepted_and_kept_as_given(files):
    args = parse_args(["train", "--corpus", files["text"], "--steps", "5", "--set", "x0_layers=[1,2]",
                       "--set", "value_residual=resformer", "--out", str(files["tmp"] / "new" / "run")])
    assert (args.steps, args.set, args.corpus) == (5, ["x0_layers=[1,2]", "value_residual=resformer"], files["text"])
    assert not (files["tmp"] / "new").exists(), "checking the output folder creates nothing"
    args = parse_args(["reproduce", "value-residual", "--seeds", "0, 1,2", "--out", files["dir"]])
    assert args.seeds == "0,1,2"


@pytest.mark.slow
def test_python_dash_m_runs_the_same_command_as_the_entry_point(files):
    run = subprocess.run([sys.executable, "-m", "vrs_edu.cli", "assignments", "list"], capture_output=True,
                         text=True, cwd=files["tmp"])
    assert run.returncode == 0, run.stderr
    assert "02_causal_attention" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "vrs_edu.cli", "train", "--corpus", files["dir"]],
                         capture_output=True, text=True, cwd=files["tmp"])
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines()[-1] == (f"vrs-edu train: error: argument --corpus: '{files['dir']}' is a "
                                                   "directory; expected a UTF-8 text file")
