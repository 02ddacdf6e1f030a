"""The set-up's installer (.ci/pip_install.py) hands uv what pip's configuration says, so that uv installs what pip
would: the indexes, find-links and constraints of pip's config file and PIP_* variables, the index of the variable
winning over the file's, as in pip."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _installer():
    spec = importlib.util.spec_from_file_location("pip_install", ROOT / ".ci" / "pip_install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _settings(tmp_path, config: str, **env) -> dict:
    (tmp_path / "pip.conf").write_text(config)
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import pip_install; "
            "print(json.dumps(pip_install.pip_settings()))")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / ".ci")], capture_output=True, text=True, check=True,
                         env={**clean, "PIP_CONFIG_FILE": str(tmp_path / "pip.conf"), **env}).stdout
    return json.loads(out)


def test_pips_indexes_find_links_and_constraints_reach_uv(tmp_path):
    settings = _settings(tmp_path, "[global]\nindex-url = https://mirror.example/simple\n"
                                   "extra-index-url = file:///a/simple file:///b/simple\nconstraint = /c.txt\n"
                                   "cert = /etc/cert.pem\n", PIP_FIND_LINKS="/wheels")
    cmd = _installer().uv_command("uv", ["--prefer-binary", "-e", ".[x]"], settings)
    # compiled at install: the graded kernels cannot write bytecode into the venv and would compile torch each time
    assert cmd[:6] == ["uv", "pip", "install", "--python", sys.executable, "--compile-bytecode"]
    pairs = list(zip(cmd[6::2], cmd[7::2]))
    assert ("--excludes", str(_installer().EXCLUDES)) in pairs
    assert ("--index-url", "https://mirror.example/simple") in pairs
    assert ("--extra-index-url", "file:///a/simple") in pairs and ("--extra-index-url", "file:///b/simple") in pairs
    assert ("--find-links", "/wheels") in pairs and ("--constraint", "/c.txt") in pairs
    assert settings["cert"] == ["/etc/cert.pem"]
    assert cmd[-2:] == ["-e", ".[x]"] and "--prefer-binary" not in cmd   # pip's option only


def test_the_variables_index_wins_over_the_files(tmp_path):
    settings = _settings(tmp_path, "[global]\nindex-url = https://file.example/simple\n",
                         PIP_INDEX_URL="https://env.example/simple")
    cmd = _installer().uv_command("uv", [], settings)
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--index-url"] == ["https://env.example/simple"]
