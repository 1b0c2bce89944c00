"""A process group is quiet only while every thread of it sleeps: one starved of CPU, or waking often, is not;
one waiting on its input is, as soon as it waits; one gone is."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from support import assert_eventually

from paidtwice.engine import group_quiet, lease_port


@contextmanager
def child(code: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", code], start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_group_that_runs_or_wakes_often_is_not_quiet_one_waiting_on_its_input_is() -> None:
    port = lease_port()
    try:
        with (
            child("while True: pass") as busy,
            child("import time\nwhile True: time.sleep(0.0005)") as waking,
        ):
            assert not any(group_quiet(busy.pid, port=port.port) for _ in range(50))
            assert sum(group_quiet(waking.pid, port=port.port) for _ in range(50)) < 5
        # It says so once it has read and answered, and waits for the next line: not before.
        with child(
            "import sys\nsys.stdout.write(sys.stdin.readline()); sys.stdout.flush(); sys.stdin.read()"
        ) as idle:
            assert idle.stdin is not None and idle.stdout is not None
            idle.stdin.write(b"hello\n")
            idle.stdin.flush()
            assert idle.stdout.readline() == b"hello\n"
            assert_eventually(
                lambda: group_quiet(idle.pid, port=port.port), what="the reader to wait on its input"
            )
        assert group_quiet(idle.pid, port=port.port), "a group gone sends nothing more"
    finally:
        port.release()
