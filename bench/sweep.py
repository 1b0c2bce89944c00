"""The crash-point sweep's wall time against the serial sum of its points and against the longest point.

    .venv/bin/python bench/sweep.py [--mode naive|journaled ...] [--script NAME ...] [--skip-serial]

Concurrent: every point of every matrix at once (16 at a time) on one server and one stub, as
`paidtwice sweep` runs them. Serial: the same sweep one point at a time, each point's wall time summed; its
longest point is the floor a concurrent sweep can reach.
"""

from __future__ import annotations

import argparse
import time

from paidtwice.lab import Lab
from paidtwice.lab._sweep import sweep


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", action="append", default=[])
    parser.add_argument("--script", action="append", default=[])
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--skip-serial", action="store_true")
    args = parser.parse_args()
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
