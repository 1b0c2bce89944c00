"""The crash-point sweep's wall time against its longest point, for each path a sweep can take.

    .venv/bin/python bench/sweep.py [--path python|python-cmd|ts|all] [--script NAME ...] [--parallel N]
    .venv/bin/python bench/sweep.py --path python [--mode naive|journaled ...] [--serial]

Paths: `python` is the deck's agent in paidtwice's own host (the in-process path, `paidtwice sweep`);
`python-cmd` is the same agent started by a command and seen through the protocol proxy (`sweep --cmd`);
`ts` is the TypeScript example (examples/ts_agent) by command. Each path sweeps both forms (naive and
journaled) under each script, every point at once unless `--parallel` says fewer, on a lab of its own.

For each path it prints the whole sweep's wall time, the ratio to its longest point (measured inside the
concurrent sweep, so on a loaded machine the ratio is a lower bound), and where the time went: how many
matrices had a plan kept from the last sweep of the same code (their points start beside the clean run; the
others' points start once their clean run has planned them), when the first point started, then the longest
point's and the median point's timeline (to the moment and the kill, down until the deployment is up again,
the replay until the invocation settled). The plans are the user's own (`~/.cache/paidtwice/plans`): the
first run on new code keeps them, the next one uses them; `--cold` sweeps with none kept (a folder of its
own, removed after). `--serial` also sweeps the python path one point at a time and prints its sum and
longest point.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _docs import load_average, write_table

from paidtwice.agent import QUESTION
from paidtwice.lab import Lab
from paidtwice.stub._scripts import Script
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._kept import PLANS_ENV, kept_plan, plan_key
from paidtwice.sweep._options import Answers, KillPlan, ModelStub
from paidtwice.sweep._sweep import (
    PointResult,
    SweepMatrix,
    deck_scripts,
    sweep,
    sweep_targets,
)
from paidtwice.targets import CommandTarget, DeckTarget, Target, TargetSpec

TS_AGENT = Path(__file__).resolve().parent.parent / "examples" / "ts_agent"
PATHS = ("python", "python-cmd", "ts")


def _targets(path: str, modes: list[str]) -> list[Target]:
    if path == "python":
        return [DeckTarget(mode) for mode in modes]
    if path == "python-cmd":
        host = f"{sys.executable} -m paidtwice.agent.host paidtwice.agent.weather:app --port $PORT"
        return [
            CommandTarget(
                f"PAIDTWICE_AGENT_MODE={mode} PAIDTWICE_PAUSE_S=5 {host}",
                "Agent",
                "run",
                QUESTION,
                mode=mode,
                # As deck_target: the deck's agent, its 5 s pause, settled by its own retry policy.
                stuck_after=None,
            )
            for mode in modes
        ]
    return [
        CommandTarget(
            f"AGENT_MODE={mode} node agent.ts",
            "Agent",
            "run",
            QUESTION,
            mode=mode,
            cwd=str(TS_AGENT),
        )
        for mode in modes
    ]


def _phases(point: PointResult) -> str:
    """A point's timeline: to the kill, down, and from up again until settled."""
    killed = point.killed_at or 0.0
    down = point.down_time or 0.0
    replay = point.wall_time - killed - down
    return f"to the kill {killed:4.1f} s, down {down:4.2f} s, replay until settled {replay:4.1f} s"


def report(
    path: str, matrices: list[SweepMatrix], wall: float, started: float, parallel: int, plans: str
) -> list[str]:
    points = [p for m in matrices for p in m.points]
    scripts = ", ".join(dict.fromkeys(m.script for m in matrices))
    first = min(p.started_at or started for p in points)
    clean = first - started
    longest = max(points, key=lambda p: p.wall_time)
    median = sorted(points, key=lambda p: p.wall_time)[len(points) // 2]
    where = f"{longest.mode}/{longest.script}: {longest.crash_point}"
    print(f"{path}: {len(matrices)} matrices, {len(points)} crash points ({scripts}), parallel {parallel}")
    print(f"  plans kept               {plans}")
    print(f"  whole sweep              {wall:6.1f} s")
    print(f"  first point started      {clean:6.1f} s")
    print(f"  longest point            {longest.wall_time:6.1f} s  ({where})")
    print(f"    {_phases(longest)}")
    print(f"  median point             {median.wall_time:6.1f} s  ({_phases(median)})")
    print(f"  mean down time           {statistics.fmean(p.down_time or 0.0 for p in points):6.2f} s")
    ended = max((p.started_at or 0) + p.wall_time for p in points) - started
    print(f"  last point settled after {ended:6.1f} s")
    print(f"  {path}: sweep / longest point  {wall / longest.wall_time:5.2f}")
    floor = (clean + longest.wall_time) / longest.wall_time
    print(f"  floor with the first point's start: (first + longest) / longest = {floor:5.2f}")
    ratio = f"{wall / longest.wall_time:.2f}"
    return [
        f"`{path}`",
        str(len(points)),
        plans,
        f"{wall:.1f} s",
        f"{clean:.1f} s",
        f"{longest.wall_time:.1f} s",
        ratio,
    ]


def sweep_path(path: str, modes: list[str], scripts: list[str], parallel: int) -> list[str]:
    named: list[tuple[str, Script]]
    if path == "ts":
        named = [(name, load_script_file(TS_AGENT / "script.toml", name)) for name in scripts]
    else:
        named = deck_scripts(scripts)
    said: list[str] = []
    with Lab(echo=said.append) as lab:
        targets = _targets(path, modes)
        model = ModelStub(price_model=lab.price_model)
        keys = [plan_key(lab, t, script, model) for t in targets for _, script in named]
        kept = sum(1 for key in keys if kept_plan(key) is not None)
        started = time.time()
        matrices = sweep_targets(lab, kills=KillPlan(parallel=parallel), targets=targets, scripts=named)
        wall = time.time() - started
    stale = sum(1 for line in said if "is not its clean run's" in line)
    for line in said:
        print(line)
    plans = f"{kept} of {len(keys)}" + (f", {stale} thrown away" if stale else "")
    return report(path, matrices, wall, started, parallel, plans)


def serial(modes: list[str], scripts: list[str]) -> None:
    with Lab(echo=lambda message: None) as lab:
        started = time.monotonic()
        matrices = sweep(
            TargetSpec(modes=tuple(modes)),
            answers=Answers(variations=tuple(scripts)),
            kills=KillPlan(parallel=1),
            lab=lab,
        )
        wall = time.monotonic() - started
    points = [p for m in matrices for p in m.points]
    longest = max(points, key=lambda p: p.wall_time)
    print(f"python, serial: {wall:.1f} s (sum of its points {sum(p.wall_time for p in points):.1f} s)")
    where = f"{longest.mode}/{longest.script}: {longest.crash_point}"
    print(f"  longest single point     {longest.wall_time:6.1f} s  ({where})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", choices=(*PATHS, "all"), default="all")
    parser.add_argument("--mode", action="append", default=[])
    parser.add_argument("--script", action="append", default=[])
    parser.add_argument("--parallel", type=int, default=48)
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--cold", action="store_true", help="sweep with no plan kept")
    args = parser.parse_args()
    if args.cold:
        cold = tempfile.TemporaryDirectory(prefix="bench-plans-")
        os.environ[PLANS_ENV] = cold.name
    modes = args.mode or ["naive", "journaled"]
    scripts = args.script or ["steady", "drifting", "changed"]
    load_before = load_average()
    rows = [
        sweep_path(path, modes, scripts, args.parallel)
        for path in (PATHS if args.path == "all" else (args.path,))
    ]
    headers = ["path", "points", "plans kept", "whole sweep", "first point", "longest point", "sweep/longest"]
    write_table("sweep", headers, rows, load=f"{load_before} to {load_average()}")
    if args.serial:
        serial(modes, scripts)


if __name__ == "__main__":
    main()
