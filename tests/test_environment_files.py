"""environment.yml (conda) pins what requirements.txt and constraints.txt (pip) pin together; the
constraints say why, reach pyproject users too, and the Makefile installs with them."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pins(lines):
    return {l.split("#")[0].strip() for l in lines if l.split("#")[0].strip() and "==" in l}


def read(name):
    return (ROOT / name).read_text().splitlines()


def test_conda_and_pip_pin_the_same_packages():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    requirements = pins(read("requirements.txt"))
    constraints = pins(read("constraints.txt"))
    assert not {p.split("==")[0] for p in requirements} & {p.split("==")[0] for p in constraints}
    assert pins(pip_section) == requirements | constraints | {"torch==2.13.0"}


def test_every_constraint_says_why_and_is_installed_with():
    lines = [l for l in read("constraints.txt") if l.strip() and not l.startswith("#")]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.-]+==\S+\s+#\s*\S.*", l) for l in lines), lines
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert pins(read("constraints.txt")) <= set(deps)      # `pip install .` keeps them too
    assert "-r requirements.txt -c constraints.txt" in (ROOT / "Makefile").read_text()
