"""The worked example under examples/mmr_plugin runs its own unit tests here too, so `make test` (whose
testpaths is tests/) checks it without the example being pip-installed: its source folder goes on
sys.path and its test functions are collected from this module."""
import importlib.util
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mmr_plugin"

# importable while its tests load (they import every module of the package), then off the path again:
# a `pip install -e` leaves the package's metadata in src/, which would otherwise make it an installed
# plugin for the rest of the session
sys.path.insert(0, str(EXAMPLE / "src"))
try:
    _spec = importlib.util.spec_from_file_location("mmr_plugin_tests", EXAMPLE / "tests" / "test_mmr.py")
    _tests = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_tests)
finally:
    sys.path.remove(str(EXAMPLE / "src"))
globals().update({name: value for name, value in vars(_tests).items() if name.startswith("test_")})


def test_the_example_is_collected_here():
    collected = [name for name in globals() if name.startswith("test_") and name != "test_the_example_is_collected_here"]
    assert len(collected) >= 5, collected
