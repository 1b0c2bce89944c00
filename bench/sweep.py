"""The crash-point sweep's wall time against the serial sum of its points and against the longest point.

    .venv/bin/python bench/sweep.py [--mode naive|journaled ...] [--script NAME ...] [--skip-serial]
    .venv/bin/python bench/sweep.py --path ts [--script NAME ...]    # the TypeScript agent via --cmd

With `--path ts` (or `both`), the TypeScript example (examples/ts_agent, naive and journaled) is swept by
command through the protocol proxy, and the ratio of the whole sweep to its longest point is printed for
that path (the longest point as measured inside the concurrent sweep, so the ratio is a lower bound).

Concurrent: every point of every matrix at once (16 at a time) on one server and one stub, as
`paidtwice sweep` runs them. Serial: the same sweep one point at a time, each point's wall time summed; its
longest point is the floor a concurrent sweep can reach.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from paidtwice.lab import Lab
from paidtwice.lab._runner import QUESTION
from paidtwice.lab._sweep import SweepTarget, sweep, sweep_targets
from paidtwice.stub._turns import load_script_file

TS_AGENT = Path(__file__).resolve().parent.parent / "examples" / "ts_agent"


def ts_path(lab: Lab, scripts: list[str], parallel: int) -> None:
    """Sweep the TypeScript agent in both forms by command; print wall time against its longest point."""
    targets = [
        SweepTarget(
            "",
            "Agent",
            "run",
            QUESTION,
            mode=mode,
            cwd=str(TS_AGENT),
            command=f"AGENT_MODE={mode} node agent.ts",
        )
        for mode in ("naive", "journaled")
    ]
    named = [(name, load_script_file(TS_AGENT / "script.toml", name)) for name in scripts]
    started = time.monotonic()
    matrices = sweep_targets(lab, targets=targets, scripts=named, parallel=parallel)
    wall = time.monotonic() - started
    points = [p for m in matrices for p in m.points]
    longest = max(points, key=lambda p: p.wall_time)
    print(f"ts --cmd sweep: {len(matrices)} matrices, {len(points)} crash points ({', '.join(scripts)})")
    print(f"concurrent wall time     {wall:7.1f} s  (parallel {parallel})")
    where = f"{longest.mode}/{longest.script}: {longest.crash_point}"
    print(f"longest point inside it  {longest.wall_time:7.1f} s  ({where})")
    print(f"ts: sweep / longest      {wall / longest.wall_time:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", action="append", default=[])
    parser.add_argument("--script", action="append", default=[])
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--skip-serial", action="store_true")
    parser.add_argument("--path", choices=("python", "ts", "both"), default="python")
    args = parser.parse_args()
    if args.path != "python":
        with Lab(echo=lambda message: None) as lab:
            ts_path(lab, args.script or ["steady", "drifting", "changed"], args.parallel)
        if args.path == "ts":
            return
    modes = args.mode or ["naive", "journaled"]
    scripts = args.script or ["steady", "drifting", "changed"]
    with Lab(echo=lambda message: None) as lab:
        started = time.monotonic()
        matrices = sweep(modes=modes, scripts=scripts, lab=lab, parallel=args.parallel)
        concurrent = time.monotonic() - started
        points = [p for m in matrices for p in m.points]
        what = f"{', '.join(modes)} x {', '.join(scripts)}"
        print(f"sweep: {len(matrices)} matrices, {len(points)} crash points ({what})")
        print(f"concurrent wall time     {concurrent:7.1f} s  (parallel {args.parallel})")
        if args.skip_serial:
            return
        started = time.monotonic()
        serial_matrices = sweep(modes=modes, scripts=scripts, lab=lab, parallel=1)
        serial = time.monotonic() - started
    serial_points = [p for m in serial_matrices for p in m.points]
    point_sum = sum(p.wall_time for p in serial_points)
    longest = max(serial_points, key=lambda p: p.wall_time)
    print(f"serial wall time         {serial:7.1f} s  (sum of its points {point_sum:.1f} s)")
    where = f"{longest.mode}/{longest.script}: {longest.crash_point}"
    print(f"longest single point     {longest.wall_time:7.1f} s  ({where})")
    print(f"concurrent / serial      {concurrent / serial:7.2f}")
    print(f"concurrent / longest     {concurrent / longest.wall_time:7.2f}")


if __name__ == "__main__":
    main()
