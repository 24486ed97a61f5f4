"""environment.yml (conda) and requirements.txt (pip) must pin the same set."""
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pins(lines):
    return {l.split("#")[0].strip() for l in lines if l.split("#")[0].strip() and "==" in l}


def test_conda_and_pip_pin_the_same_packages():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    requirements = pins((ROOT / "requirements.txt").read_text().splitlines())
    assert pins(pip_section) == requirements | {"torch==2.13.0"}
