"""Journals checked per second offline, on one core, beside the time a live check takes on the lab's server.

    .venv/bin/python bench/replay_check.py [--journals 1000] [--live 30] [--files 10000]

The deck's agent (journaled mode, then naive mode with its model calls answered by the stub) records one
clean run on the lab's server. Then:

  live      the journal checked the way a user checks it on a server: `restart-as-new` from the journal's
            last entry before the output onto the same deployment, timed from the admin call until the new
            invocation's outcome is known (read by attaching to it, not by polling); --live samples
  offline   copies of the journal replayed by `Replayer.replay_journals` (what `replay-check` and
            `assert_replays` call), this process pinned to one CPU (the stub's thread included): CPU
            seconds of this process, and the wall clock beside them; as one batch, one at a time, and
            as a batch of journal files read as `replay-check DIR` reads them
  the SDK   the same request bodies fed straight to the app's restate-sdk endpoint, one at a time, with
            nothing checked and nothing handed to the SDK, measured before any Replayer has patched the
            SDK in this process: what the SDK's own replay of the handler costs (it reads each step's
            return type on every call, which a replay hands it, read once); only for the journaled run,
            whose handler makes no call outside the journal (a bare request has no stub to answer one)
  files     with --files N: N copies of the journaled run's journal written as files to a temporary
            directory, checked by the real `paidtwice replay-check --json DIR` in a child process, at
            1,000 files and at N: journals per second (wall and the child's CPU) and the child's peak
            memory (its ru_maxrss, from wait4), which must not grow with the number of files

The ratio is journals per CPU second times the live check's median: how many journals one core checks
offline in the time one live check takes. "x the SDK" is paidtwice's CPU per journal over the SDK's own.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _docs import write_table

from paidtwice.agent import AgentMode
from paidtwice.engine import wait_until
from paidtwice.lab import Lab
from paidtwice.replay import JournalFile, Replayer, capture_journal, save_journal
from paidtwice.replay._protocol import entry_message_type, frame, start_message
from paidtwice.replay._replayer import DEFAULT_CONCURRENCY
from paidtwice.replay._seed import invocation_id_bytes
from paidtwice.targets import DeckTarget


@dataclass(frozen=True)
class Recorded:
    """One clean run of the deck's agent and its live checks."""

    journal: JournalFile
    """The run's journal."""
    service: str
    """The service it ran as."""
    live: tuple[float, ...]
    """Seconds each live check took, from the admin call until its outcome was known."""


@dataclass(frozen=True)
class Rate:
    """Journals checked per second."""

    per_cpu: float
    """Per CPU second of this process."""
    per_wall: float
    """Per wall-clock second (on a loaded machine, other processes' turns count too)."""


def record(lab: Lab, mode: AgentMode) -> Recorded:
    service = f"Bench_{mode}"
    lane = lab.stub.open_lane(lab.stub.lane("default").script)  # type: ignore[union-attr]
    agent, _trace = lab.launch(DeckTarget(mode, pause=None), lane, service)
    with agent:
        agent.start()
        deployment = lab.admin.register_deployment(agent.uri).id
        invocation = lab.ingress.send(service, "run", "What should I wear in Paris today?")
        _wait(lambda: _status(lab, invocation) == "completed", "the clean run")
        journal = capture_journal(lab.sql, invocation)
        before_output = journal.entries[-2].index
        times = []
        for _ in range(ARGS.live):
            started = time.monotonic()
            new = lab.admin.restart_as_new(invocation, from_entry=before_output, deployment=deployment)
            answer = lab.ingress.attach(new, timeout=60)  # returns once the new invocation has completed
            times.append(time.monotonic() - started)
            if answer.status_code != 200 or _status(lab, new) != "completed":
                raise SystemExit(f"the live check of {new} did not complete: {answer.status_code}")
    return Recorded(journal, service, tuple(times))


def _wait(condition: Callable[[], bool], what: str) -> None:
    if not wait_until(condition, timeout=60):
        raise SystemExit(f"timed out waiting for {what}")


def _status(lab: Lab, invocation: str) -> str:
    row = lab.sql.invocation(invocation)
    return row.status if row else ""


def deck_app(service: str, mode: str) -> Any:
    os.environ["PAIDTWICE_SERVICE"] = service
    os.environ["PAIDTWICE_AGENT_MODE"] = mode
    import paidtwice.agent.weather as weather

    return importlib.reload(weather).app


def offline(
    app: Any, journal: JournalFile | Path, count: int, concurrency: int = DEFAULT_CONCURRENCY
) -> tuple[Rate, int]:
    """Replay `count` copies as one batch: the rate, and the model calls made outside the journal. Given
    a file, each copy is read from it, as `replay-check DIR` reads its files."""
    with Replayer(app, concurrency=concurrency) as replayer:
        replayer.replay_journals([journal] * 20)  # warm
        cpu, wall = time.process_time(), time.monotonic()
        results = replayer.replay_journals([journal] * count)
        rate = Rate(count / (time.process_time() - cpu), count / (time.monotonic() - wall))
    if not all(r.verdict == "replays" for r in results):
        raise SystemExit(f"the journal did not replay offline: {results[0].describe()}")
    return rate, sum(len(r.outside_calls) for r in results) // count


def sdk_alone(app: Any, journal: JournalFile, count: int) -> Rate:
    """The same request, fed straight to the app's endpoint: only the SDK's own replay of the handler."""
    from restate.server_context import ServerInvocationContext

    if getattr(ServerInvocationContext.run, "_paidtwice_replay", False):
        raise SystemExit("the SDK alone must be measured before a Replayer patches the SDK")
    body = start_message(
        raw_id=invocation_id_bytes(journal.invocation_id),
        debug_id=journal.invocation_id,
        known_entries=len(journal.entries),
        key=journal.key,
        random_seed=journal.random_seed or 0,
    ) + b"".join(frame(entry_message_type(e.type), e.raw) for e in journal.entries)
    content_type = f"application/vnd.restate.invocation.v{journal.protocol_version}".encode()
    path = f"/invoke/{journal.service}/{journal.handler}"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "2",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", content_type)],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
    }

    async def one() -> None:
        answered = asyncio.Event()
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await answered.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered.set()

        await app(scope, receive, send)

    async def many(n: int) -> None:
        for _ in range(n):
            await one()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(many(20))  # warm
        cpu, wall = time.process_time(), time.monotonic()
        loop.run_until_complete(many(count))
        return Rate(count / (time.process_time() - cpu), count / (time.monotonic() - wall))
    finally:
        loop.close()


def report(mode: str, recorded: Recorded) -> list[str]:
    journal, live = recorded.journal, recorded.live
    app = deck_app(recorded.service, mode)
    # First, before any Replayer patches the SDK in this process: nothing of paidtwice around it.
    floor = sdk_alone(app, journal, ARGS.journals) if mode == "journaled" else None
    batch, calls = offline(app, journal, ARGS.journals)
    alone, _ = offline(app, journal, ARGS.journals, concurrency=1)
    with tempfile.TemporaryDirectory() as directory:
        files, _ = offline(app, save_journal(Path(directory) / "journal.json", journal), ARGS.journals)
    if calls and floor is not None:
        raise SystemExit(f"the {mode} handler made {calls} model calls outside the journal: no SDK floor")
    median = statistics.median(live)
    deciles = statistics.quantiles(live, n=10)
    print(f"\n{mode} journal, {len(journal.entries)} entries, {calls} model calls outside the journal each")
    print(f"  offline, a batch ({DEFAULT_CONCURRENCY} side by side): {_rate(batch)}")
    print(f"  offline, one at a time:            {_rate(alone)}")
    print(f"  a batch read from journal files:   {_rate(files)}")
    if floor is not None:
        print(f"  the SDK alone, one at a time:      {_rate(floor)}")
    print(
        f"  CPU per journal: {1e6 / batch.per_cpu:.0f} us in a batch, {1e6 / alone.per_cpu:.0f} us alone, "
        f"{1e6 / files.per_cpu:.0f} us from files"
        + (f", {1e6 / floor.per_cpu:.0f} us for the SDK alone" if floor is not None else "")
    )
    if floor is not None:
        print(
            f"  paidtwice / the SDK alone (CPU per journal): {_times(floor, batch)} in a batch, "
            f"{_times(floor, alone)} one at a time, {_times(floor, files)} from files (target: 1.3x at most)"
        )
    print(
        f"  live restart-as-new to outcome:    median {median * 1000:.1f} ms, p10 {deciles[0] * 1000:.1f} "
        f"to p90 {deciles[-1] * 1000:.1f} ms, min {min(live) * 1000:.1f} max {max(live) * 1000:.1f} ms "
        f"({len(live)} checks)"
    )
    line = f"  offline is {batch.per_cpu * median:.0f}x faster by CPU ({batch.per_wall * median:.0f}x wall)"
    if floor is not None:
        line += f"; the SDK alone: {floor.per_cpu * median:.0f}x"
    print(line)
    return [
        f"{mode}, {len(journal.entries)} entries, {calls} model calls",
        f"{batch.per_cpu:,.0f} /s",
        f"{alone.per_cpu:,.0f} /s",
        f"{files.per_cpu:,.0f} /s",
        f"{floor.per_cpu:,.0f} /s" if floor is not None else "",
        f"{_times(floor, batch)}, {_times(floor, alone)}, {_times(floor, files)}"
        if floor is not None
        else "",
        f"{median * 1000:.1f} ms ({deciles[0] * 1000:.1f} to {deciles[-1] * 1000:.1f})",
        f"{batch.per_cpu * median:.0f}x",
    ]


def _times(floor: Rate, rate: Rate) -> str:
    """paidtwice's CPU per journal over the SDK's own."""
    return f"{floor.per_cpu / rate.per_cpu:.2f}x"


@dataclass(frozen=True)
class FilesRun:
    """One `paidtwice replay-check --json DIR` over journal files, in a child process."""

    files: int
    """Journal files in DIR."""
    wall: float
    """Seconds from start to exit."""
    cpu: float
    """The child's CPU seconds (user and system)."""
    peak_kib: int
    """The child's peak resident memory (ru_maxrss, KiB)."""


def replay_check_files(recorded: Recorded, count: int) -> FilesRun:
    """`count` copies of the journal as files, checked by the real command in a child process."""
    with tempfile.TemporaryDirectory(prefix="paidtwice-bench-") as directory:
        journals = Path(directory) / "journals"
        first = save_journal(journals / "00000.json", recorded.journal)
        for number in range(1, count):
            shutil.copyfile(first, journals / f"{number:05d}.json")
        output = Path(directory) / "replay-check.json"
        command = [sys.executable, "-m", "paidtwice", "replay-check", "--app", "paidtwice.agent.weather:app"]
        env = {**os.environ, "PAIDTWICE_SERVICE": recorded.service, "PAIDTWICE_AGENT_MODE": "journaled"}
        with output.open("w") as out:
            started = time.monotonic()
            child = subprocess.Popen([*command, "--json", "-", str(journals)], stdout=out, env=env)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.monotonic() - started
            child.returncode = os.waitstatus_to_exitcode(status)
        records = json.loads(output.read_text())
        if child.returncode != 0 or len(records) != count or any(r["verdict"] != "replays" for r in records):
            raise SystemExit(
                f"replay-check of {count} files: exit {child.returncode}, {len(records)} records"
            )
    return FilesRun(count, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def report_files(recorded: Recorded, load: str) -> None:
    counts = sorted({min(1000, ARGS.files), ARGS.files})
    runs = [replay_check_files(recorded, count) for count in counts]
    print(
        "\n`paidtwice replay-check --json DIR` on copies of the journaled run's journal "
        f"(load average {load})"
    )
    rows = []
    for run in runs:
        row = [
            f"{run.files:,}",
            f"{run.files / run.wall:,.0f} /s",
            f"{run.files / run.cpu:,.0f} /s",
            f"{run.wall:.1f} s",
            f"{run.peak_kib / 1024:.0f} MiB",
        ]
        print(f"  {row[0]:>6} files: {row[1]} wall, {row[2]} per CPU second, {row[3]}, peak memory {row[4]}")
        rows.append(row)
    headers = ["journal files", "journals per second", "per CPU second", "wall clock", "peak memory"]
    write_table(
        "replay-check-files",
        headers,
        rows,
        load=load,
        note="One child process each (its start and the app's import included); peak memory: its ru_maxrss.",
    )


def _rate(rate: Rate) -> str:
    return f"{rate.per_cpu:5.0f} journals per CPU second ({rate.per_wall:5.0f}/s wall clock)"


def main() -> None:
    with Lab(echo=lambda message: None) as lab:
        recorded = {mode: record(lab, mode) for mode in ("journaled", "naive")}
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"replay-check offline on one core vs live restart-as-new on the lab's server "
        f"({os.cpu_count()} cores shared, load average {load})"
    )
    rows = [report(mode, run) for mode, run in recorded.items()]
    headers = [
        "journal",
        "offline, a batch",
        "one at a time",
        "from journal files",
        "the SDK alone",
        "x the SDK (batch, alone, files)",
        "live check, median (p10 to p90)",
        "ratio",
    ]
    write_table("replay-check", headers, rows, load=load, note="Rates are journals per CPU second.")
    if ARGS.files:
        report_files(recorded["journaled"], load)


parser = argparse.ArgumentParser()
parser.add_argument("--journals", type=int, default=1000)
parser.add_argument("--live", type=int, default=30)
parser.add_argument("--files", type=int, default=0, help="also check this many journal files in one command")
ARGS = parser.parse_args()

if __name__ == "__main__":
    main()
