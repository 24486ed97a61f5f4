"""What the browser tests rely on, checked without a browser: a missing Chromium skips them on a
developer's machine and fails them under CI; JupyterLab's command takes port 0 (the OS picks a free
port, which the server writes down) and refuses ports out of range."""
import pytest

import browser_support
from rag_lab.runs.lab import lab_command


@pytest.mark.parametrize("ci, outcome", [(None, pytest.skip.Exception), ("", pytest.skip.Exception),
                                         ("false", pytest.skip.Exception), ("true", pytest.fail.Exception),
                                         ("1", pytest.fail.Exception)])
def test_a_missing_chromium_skips_unless_ci_is_set(monkeypatch, ci, outcome):
    monkeypatch.setattr(browser_support, "chromium_path", lambda: None)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no Chromium/Chrome on this machine"):
        with browser_support.chromium():
            pass


def test_lab_command_takes_port_zero_and_refuses_ports_out_of_range():
    assert "--ServerApp.port=0" in lab_command(0, "t", open_browser=False)
    assert "--ServerApp.port=8888" in lab_command()
    for port in (-1, 65536):
        with pytest.raises(ValueError, match="between 0 \\(any free port\\) and 65535"):
            lab_command(port)
