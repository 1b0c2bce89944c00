"""A load's wait: a process starved of CPU by a busy machine is waited for past the wait, one that uses no
CPU (blocked on the network, a lock, its input) is given up on once the wait passed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from paidtwice.engine import group_cpu_seconds, wait_for_load


@contextmanager
def child(code: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_process_using_cpu_is_waited_for_past_the_wait() -> None:
    with child("while True: pass") as busy:
        began = time.monotonic()
        waited = wait_for_load(lambda: time.monotonic() - began >= 2.0, busy.pid, timeout=1.0)
        assert waited is None
        assert (group_cpu_seconds(busy.pid) or 0.0) > 0.0


def test_a_process_using_no_cpu_is_given_up_on_once_the_wait_passed() -> None:
    with child("import time; time.sleep(600)") as idle:
        waited = wait_for_load(lambda: False, idle.pid, timeout=0.5)
        assert waited is not None and 0.5 <= waited < 600


def test_a_gone_process_has_no_cpu_time() -> None:
    with child("pass") as gone:
        gone.wait()
    assert group_cpu_seconds(gone.pid) is None
