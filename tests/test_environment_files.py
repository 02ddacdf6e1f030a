"""environment.yml (conda path) must list the same packages as pyproject.toml (pip path). This catches drift; it
cannot prove that conda solves the environment (no conda channel is reachable in CI)."""
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PYPI = {"pytorch": "torch", "matplotlib-base": "matplotlib"}


def _pyproject_names():
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return {canonicalize_name(Requirement(r).name) for r in reqs}


def _env():
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def test_environment_yml_shape():
    env = _env()
    assert set(env) <= {"name", "channels", "dependencies"}
    assert env["channels"] == ["conda-forge"]
    assert any(isinstance(d, str) and d.startswith("python=") for d in env["dependencies"]), "pin python="


def test_environment_yml_lists_the_same_packages_as_pyproject():
    names = set()
    pip_section = []
    for dep in _env()["dependencies"]:
        if isinstance(dep, dict):
            pip_section = dep["pip"]
            continue
        name = dep.split("=")[0].split(">")[0].split("<")[0].strip()
        if name not in ("python", "pip"):
            names.add(canonicalize_name(CONDA_TO_PYPI.get(name, name)))
    assert "-e ." in pip_section, "the course package itself must come in via `pip: [-e .]`"
    names |= {canonicalize_name(Requirement(p).name) for p in pip_section if not p.startswith("-e")}
    expected = _pyproject_names()
    assert names == expected, f"only in environment.yml: {sorted(names - expected)}; " \
                              f"only in pyproject: {sorted(expected - names)}"


def test_torch_is_pinned_exactly():
    with (ROOT / "pyproject.toml").open("rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    torch = [Requirement(d) for d in deps if Requirement(d).name == "torch"]
    assert torch and str(torch[0].specifier).startswith("=="), "a loose torch pulls a multi-GB CUDA build"
