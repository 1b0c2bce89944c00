"""`Process.kill` waits for its group to exit: a zombie left in it (an orphan not reaped yet) is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from support import assert_eventually

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


_LAB = """
import sys
from pathlib import Path
from paidtwice.engine._process import Process

folder = Path(sys.argv[1])
# A compound command: sh forks its children instead of becoming them, so they lack its parent-death signal.
command = f"sleep 300 & echo $! > {folder / 'grandchild'}; wait"
Process(["sh", "-c", command], name="command", log_path=folder / "log").start()
print("started", flush=True)
sys.stdin.read()
"""


def test_a_grandchild_of_the_lab_dies_when_the_lab_is_killed(tmp_path: Path) -> None:
    """SIGKILL a lab that started `sh -c '...'`: the command sh forked is in sh's group, which the janitor
    kills once the lab is gone (the parent-death signal reaches sh alone)."""
    lab = subprocess.Popen(
        [sys.executable, "-c", _LAB, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    grandchild = 0
    try:
        assert lab.stdout is not None and lab.stdout.readline().strip() == "started"
        pid_file = tmp_path / "grandchild"
        assert_eventually(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), timeout=60)
        grandchild = int(pid_file.read_text())
        lab.kill()
        lab.wait()
        assert_eventually(lambda: not _running(grandchild), timeout=60, what="the lab's grandchild to die")
    finally:
        lab.kill()
        if grandchild and _running(grandchild):
            os.kill(grandchild, 9)


def _running(pid: int) -> bool:
    try:
        return _state(pid) != "Z"
    except FileNotFoundError:
        return False
