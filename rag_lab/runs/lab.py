"""``make lab``: JupyterLab from this Python environment, on 127.0.0.1, opening ``notebooks/``.

The notebooks name the ``rag_lab`` kernel (``make setup`` registers it in this environment), and
the kernel starts in each notebook's own folder, as papermill runs it, so a notebook's relative
paths (``figures_dir = "../figures/..."``) mean the same thing in both. The server's root is the
repository, so ``figures/`` and ``papermill_runs/`` can be browsed beside the notebooks.

``lab_command`` is the one place the command line is written: the Makefile runs this module and
the browser test (tests/test_browser_lab.py) starts JupyterLab with the same command.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def lab_command(port: int = 8888, token: str | None = None, open_browser: bool = True, root: str | Path = ROOT,
                python: str = sys.executable, extra: tuple[str, ...] = ()) -> list[str]:
    """The JupyterLab command: loopback only, ``root`` as the server's root, opening ``notebooks/``.

    ``token`` None keeps Jupyter's own random token (printed in the URL it logs). ``port`` 0: a free port
    the OS gives the server, which it writes to ``jpserver-<pid>.json`` in its runtime folder (how the
    browser test starts it: a port found free here could be taken before the server binds it)."""
    if not 0 <= int(port) < 65536:
        raise ValueError(f"port must be between 0 (any free port) and 65535, got {port}")
    cmd = [python, "-m", "jupyterlab", f"--ServerApp.ip={HOST}", f"--ServerApp.port={int(port)}",
           f"--ServerApp.root_dir={Path(root).resolve()}", "--ServerApp.default_url=/lab/tree/notebooks"]
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")   # containers and CI run as root; Jupyter refuses that unless told
    return cmd + list(extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.runs.lab", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8888, help="port on 127.0.0.1 (default 8888; the next free one if taken)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    args = parser.parse_args(argv)
    from .runner import kernel_name
    try:
        kernel_name()   # a clear message when `make setup` has not registered the kernel
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cmd = lab_command(args.port, open_browser=not args.no_browser)
    os.execv(cmd[0], cmd)   # JupyterLab takes over this process (Ctrl-C stops it)
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
