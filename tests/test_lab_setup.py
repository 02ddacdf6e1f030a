"""`make lab` starts JupyterLab with the course's style sheet (vrs_edu/course/jupyterlab/custom.css): printed
outputs wrap at a space, not inside a word (JupyterLab's own rule is `word-break: break-all`). Checked with
`make -n` (prints the commands, runs nothing); tests/test_browser_unexecuted.py checks the style in Chromium."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSS = ROOT / "vrs_edu" / "course" / "jupyterlab" / "custom.css"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_serves_the_course_css_from_a_config_dir_of_its_own(tmp_path):
    venv = tmp_path / "venv"
    out = subprocess.run(["make", "-n", "lab", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.replace("\\\n", " ")
    config = f"{venv}/etc/vrs_edu-lab"
    assert f"cp vrs_edu/course/jupyterlab/custom.css {config}/custom/custom.css" in out
    lab = next(line for line in out.splitlines() if "jupyter lab " in line)
    assert f"JUPYTER_CONFIG_DIR={config} " in lab and "--LabApp.custom_css=True" in lab
    # the learner's own JupyterLab settings and workspaces stay where they were
    assert "JUPYTERLAB_SETTINGS_DIR=" in lab and "JUPYTERLAB_WORKSPACES_DIR=" in lab
    assert "--ServerApp.ip=127.0.0.1" in lab                     # still loopback only


def test_the_css_overrides_jupyterlabs_mid_word_breaks_in_printed_outputs():
    text = re.sub(r"/\*.*?\*/", "", CSS.read_text(), flags=re.S)
    rules = {k.strip(): v for k, v in re.findall(r"([^{}]+)\{([^}]*)\}", text)}
    body = rules[".jp-OutputArea .jp-OutputArea-output pre"]   # more specific than JupyterLab's rule
    assert re.search(r"word-break:\s*normal", body) and re.search(r"overflow-wrap:\s*break-word", body)
