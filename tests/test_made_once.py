"""``made_once`` (tests/conftest.py), what lets the test processes of one session share a notebook run:
two processes asking at the same time get one value made once; a failure made once fails the later
asker too, naming the first failure, without making it again."""
import json
import multiprocessing
import time

import pytest

from conftest import made_once


def _make(folder):
    with open(folder.parent / "calls", "a") as fh:     # one line per call, whichever process makes it
        fh.write("made\n")
    time.sleep(0.3)                                    # so the other process asks while this one holds the lock
    return {"rows": [1, 2, 3]}


def _ask(folder, out):
    out.write_text(json.dumps(made_once(folder, _make)))


def test_two_processes_asking_at_once_get_one_value_made_once(tmp_path):
    folder = tmp_path / "run"
    fork = multiprocessing.get_context("fork")
    askers = [fork.Process(target=_ask, args=(folder, tmp_path / f"out{i}")) for i in range(2)]
    for p in askers:
        p.start()
    for p in askers:
        p.join(60)
    assert [p.exitcode for p in askers] == [0, 0]
    assert (tmp_path / "calls").read_text() == "made\n"
    assert [json.loads((tmp_path / f"out{i}").read_text()) for i in range(2)] == [{"rows": [1, 2, 3]}] * 2
    assert made_once(folder, _make) == {"rows": [1, 2, 3]} and (tmp_path / "calls").read_text() == "made\n"


def test_a_failure_is_made_once_and_fails_every_later_asker(tmp_path):
    calls = []

    def broken(folder):
        calls.append(folder)
        raise ValueError("no such notebook")

    with pytest.raises(ValueError, match="no such notebook"):
        made_once(tmp_path / "run", broken)
    with pytest.raises(pytest.fail.Exception, match="run failed when an earlier test made it:\nValueError: no such notebook"):
        made_once(tmp_path / "run", broken)
    assert len(calls) == 1
