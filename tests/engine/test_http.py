"""The lab's HTTP client is the calling thread's own: httpcore's pool lets one thread's request close a pooled
connection another thread was just handed, which then read a closed socket ('Bad file descriptor' from the
admin and ingress clients in a concurrent deck). No two threads share a pool, and a thread's client is closed
when the thread ends."""

from __future__ import annotations

import os
import threading

import httpx

from paidtwice.engine._http import http


def _clients_of_a_thread() -> tuple[httpx.Client, httpx.Client]:
    seen: list[tuple[httpx.Client, httpx.Client]] = []
    thread = threading.Thread(target=lambda: seen.append((http(), http())))
    thread.start()
    thread.join()
    return seen[0]


def test_each_thread_has_a_client_of_its_own_closed_when_the_thread_ends() -> None:
    mine = http()
    first, again = _clients_of_a_thread()
    other, _ = _clients_of_a_thread()
    assert http() is mine
    assert first is again
    assert len({id(mine), id(first), id(other)}) == 3
    assert first.is_closed and other.is_closed
    assert not mine.is_closed


def test_a_forked_child_leaves_the_clients_of_other_threads_alone() -> None:
    """A child forked while another thread holds a client (the lab's Popen with a preexec_fn) drops that
    thread's slot as it starts; closing the client there would take a pool lock the thread may hold, and
    the child would never reach its exec."""
    seen: list[httpx.Client] = []
    made, done = threading.Event(), threading.Event()

    def hold() -> None:
        seen.append(http())
        made.set()
        done.wait()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert made.wait(timeout=30.0)
        pid = os.fork()
        if pid == 0:
            os._exit(1 if seen[0].is_closed else 0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        done.set()
        thread.join()
