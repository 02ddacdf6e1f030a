"""`make` installs torch from wherever pip is configured to look, unless TORCH_INDEX names a wheel index (e.g.
PyTorch's CPU index): then torch alone is installed from there first. Checked with `make -n` (prints the commands,
runs nothing), so no network is needed."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands(tmp_path, *extra) -> list[str]:
    run = subprocess.run(["make", "-n", "setup", f"VENV={tmp_path / 'venv'}", *extra], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return [line for line in run.stdout.splitlines() if "pip install" in line]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_torch_index_is_used_only_when_given(tmp_path):
    plain = _setup_commands(tmp_path)
    assert len(plain) == 1 and "--index-url" not in plain[0] and "-e '.[" in plain[0]
    cpu = _setup_commands(tmp_path, "TORCH_INDEX=https://download.pytorch.org/whl/cpu")
    assert len(cpu) == 2 and cpu[1] == plain[0], "torch first, then everything else as without TORCH_INDEX"
    pin = next(line.strip().strip('",') for line in (ROOT / "pyproject.toml").read_text().splitlines()
               if line.strip().startswith('"torch=='))
    assert cpu[0].split(" ||")[0].endswith(
        f"-m pip install --prefer-binary --index-url 'https://download.pytorch.org/whl/cpu' '{pin}'")
