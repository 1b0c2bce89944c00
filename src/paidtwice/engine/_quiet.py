"""Whether a process group has gone quiet: nothing of it can run again before something outside wakes it.

Read twice from /proc: every thread of the group asleep in both readings, none scheduled in between (its
run count unchanged), so at the moment the first reading ended the whole group slept; and no byte left in
the send queues of its connections from `port`. Whatever the group had to write without being answered is
then with the reader, however slowly a loaded machine ran it. Not a clock: a group starved of CPU is
runnable, not asleep, and is waited for.
"""

from __future__ import annotations

import os

__all__ = ["group_quiet"]

_ASLEEP = (b"S", b"Z", b"X")
"""Thread states that wait for an event (or are gone); R runs or waits for a CPU, D waits on a disk."""
_ESTABLISHED = "01"


def _threads(pgid: int) -> dict[tuple[str, str], tuple[bytes, bytes, bytes]] | None:
    """(pid, tid) -> (state, CPU time, times scheduled) of every thread of the group; None without /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    threads: dict[tuple[str, str], tuple[bytes, bytes, bytes]] = {}
    for pid in entries:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
            # pid (comm) state ppid pgrp: comm may hold spaces and parentheses, so split after the last ")".
            group = int(stat[stat.rfind(b")") + 2 :].split()[2])
        except (OSError, IndexError, ValueError):
            # Gone before it was read: of this group or another, it runs no more. (Counted as running, the
            # short-lived processes of a busy machine kept every group from ever being quiet.)
            continue
        if group != pgid:
            continue
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                    ran, _, scheduled = handle.read().split()[:3]
                threads[(pid, tid)] = (state, ran, scheduled)
        except (OSError, IndexError, ValueError):
            threads[(pid, "gone")] = (b"R", b"", b"")  # changed while read: read again
    return threads


def _unsent(port: int) -> int:
    """Bytes in the send queues of the established TCP connections from local `port` (/proc/net/tcp*)."""
    total = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state, queues = fields[1], fields[3], fields[4]
            if state == _ESTABLISHED and int(local.rsplit(":", 1)[1], 16) == port:
                total += int(queues.split(":")[0], 16)
    return total


def group_quiet(pgid: int, *, port: int) -> bool:
    """Every thread of process group `pgid` slept, at one moment, with nothing of its connections from
    `port` left unsent or unacknowledged (see the module's docstring). True once the group is gone; False
    where /proc cannot tell."""
    before = _threads(pgid)
    if before is None:
        return False
    if any(state not in _ASLEEP for state, _, _ in before.values()):
        return False
    if _unsent(port):
        return False
    return _threads(pgid) == before
