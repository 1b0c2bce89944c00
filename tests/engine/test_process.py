"""`Process.kill` waits for its group to exit: a zombie left in it (an orphan not reaped yet) is gone."""

from __future__ import annotations

import os
import subprocess
import time

from paidtwice.engine._process import _group_alive


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    return stat[stat.rfind(b")") + 2 :].split()[0].decode()


def test_a_group_whose_only_member_is_a_zombie_is_not_alive() -> None:
    leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert _group_alive(leader.pid)
        os.kill(leader.pid, 9)
        deadline = time.monotonic() + 30
        while _state(leader.pid) != "Z":  # exited, not reaped: the group is still there for killpg
            assert time.monotonic() < deadline, "the killed process never became a zombie"
            time.sleep(0.01)
        os.killpg(leader.pid, 0)  # the signal test alone would call the group alive
        assert not _group_alive(leader.pid)
    finally:
        leader.kill()
        leader.wait()
