"""Run named jobs at once, a thread each. When one fails, the others are stopped and the first failure is
raised, under its own name: a job stopped because another failed is never reported as the cause."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

from paidtwice._exceptions import ExperimentError, LabCancelled, PaidtwiceError

__all__ = ["named_failure", "run_together"]

T = TypeVar("T")


def named_failure(name: str, error: BaseException) -> BaseException:
    """`error` as the job `name` raised it: a paidtwice error as an `ExperimentError` that starts with the
    job's name (once), anything else (a bug, Ctrl-C) unchanged with the name in a note."""
    if isinstance(error, LabCancelled) or not isinstance(error, Exception):
        return error
    if not isinstance(error, PaidtwiceError):
        error.add_note(f"in {name}")
        return error
    text = str(error)
    named = ExperimentError(text if text.startswith(f"{name}: ") else f"{name}: {text}")
    named.__cause__ = error
    return named


def run_together(
    jobs: Sequence[tuple[str, Callable[[], T]]], *, cancelled: threading.Event, thread_name: str
) -> list[T]:
    """Run every job at once; returns their results in the jobs' order.

    The first job to fail sets `cancelled` (the others' waits give up, see `wait_for`); once every job has
    stopped, its own error is raised, named (`named_failure`), with the names of any other job that failed
    for a reason of its own. Stopped jobs (`LabCancelled`) are reported only when nothing else failed: then
    the lab itself was interrupted.
    """
    failures: list[tuple[float, str, BaseException]] = []
    lock = threading.Lock()

    def watched(name: str, job: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            try:
                return job()
            except BaseException as error:
                with lock:
                    failures.append((time.monotonic(), name, error))
                raise

        return run

    with ThreadPoolExecutor(max_workers=max(1, len(jobs)), thread_name_prefix=thread_name) as pool:
        futures = [pool.submit(watched(name, job)) for name, job in jobs]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
            if any(f.done() and f.exception() is not None for f in futures):
                cancelled.set()
                wait(futures)
        except BaseException:
            # Ctrl-C: every job's waits give up and its processes are killed.
            cancelled.set()
            raise
    if not failures:
        return [future.result() for future in futures]
    failures.sort(key=lambda failure: failure[0])
    own = [(name, error) for _, name, error in failures if not isinstance(error, LabCancelled)]
    name, error = own[0] if own else (failures[0][1], failures[0][2])
    raised = named_failure(name, error)
    others = [other for other, _ in own[1:]]
    if others and isinstance(raised, ExperimentError):
        raised = ExperimentError(f"{raised} (failed too: {', '.join(others)})")
        raised.__cause__ = error
    raise raised
