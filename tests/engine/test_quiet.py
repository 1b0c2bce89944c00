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


def test_the_short_lived_processes_of_other_groups_do_not_keep_a_group_from_being_quiet() -> None:
    # A busy machine starts and ends processes all the time; one gone while /proc was read is no one's.
    port = lease_port()
    try:
        with (
            child("import sys\nsys.stdin.read()") as idle,
            child("import subprocess, sys\nwhile True: subprocess.run([sys.executable, '-c', ''])"),
        ):
            assert_eventually(lambda: group_quiet(idle.pid, port=port.port), what="the reader to wait")
            assert all(group_quiet(idle.pid, port=port.port) for _ in range(200))
    finally:
        port.release()
