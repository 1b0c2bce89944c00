"""The lab on a 3-node cluster beside one node: the deck's wall time, the stall after a leader kill, and what
journaling a model call costs.

    .venv/bin/python bench/cluster.py [--kills N] [--invocations N] [--skip-deck] [--skip-stalls]

1. The concurrent deck (every row) on one restate-server, then on a 3-node cluster: wall times, their
   ratio, and whether every row matched on each.
2. node-kill-in-pause N times (at least 5) on the cluster, one after the other: the stall from the kill to
   the next attempt reaching the agent (the new leader picking the invocation up), to the next journal
   entry, that minus what was left of the durable pause, and to completion; median and max.
3. A one-step agent against a zero-latency stub, naive and journaled, on one node and on the cluster:
   p50 and p99 of the model step, and what journaling adds on each. The four series are measured turn
   about (one request to each in every round), so the machine's load, which changes by the minute on a
   shared machine, weighs on all four alike.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import httpx
from _docs import load_average, write_text
from journal_overhead import percentile

from paidtwice.deck import CURVES, EXPERIMENTS, WALKS, Deck, Experiment, Row, experiment_by_name
from paidtwice.lab import Lab
from paidtwice.stub import SCRIPTS
from paidtwice.targets import DeckTarget


def deck_time(cluster: int) -> tuple[float, bool, list[str]]:
    rows: list[Row] = [*EXPERIMENTS, *CURVES, *WALKS]
    with Lab(echo=lambda message: None, cluster=cluster) as lab:
        started = time.monotonic()
        records = Deck(lab).run_rows(rows, concurrent=True)
        wall = time.monotonic() - started
    return wall, all(r.matches for r in records), [r.name for r in records if not r.matches]


def stalls(kills: int) -> dict[str, list[float]]:
    row = experiment_by_name("node-kill-in-pause")
    assert isinstance(row, Experiment)
    figures: dict[str, list[float]] = {
        "resumed (next attempt)": [],
        "next journal entry": [],
        "next entry beyond the pause": [],
        "completion": [],
        "takeover reported": [],
    }
    with Lab(echo=lambda message: None, cluster=3) as lab:
        for _ in range(kills):
            record = Deck(lab).run(row)
            kill = record.node_kill
            assert kill is not None
            ok = "matches" if record.matches else "DIFFERS"
            print(
                f"  {kill.killed_node} -> {kill.took_over} (partition {kill.partition}): "
                f"{record.model_calls} model / {record.tool_calls} tool calls, {ok}; "
                f"resumed {kill.resumed_after}s, next entry {kill.stall_to_next_entry}s "
                f"({kill.pause_left_at_kill}s of pause left), completed {kill.stall_to_completion}s"
            )
            if kill.resumed_after is not None:
                figures["resumed (next attempt)"].append(kill.resumed_after)
            if kill.stall_to_next_entry is not None:
                figures["next journal entry"].append(kill.stall_to_next_entry)
                figures["next entry beyond the pause"].append(
                    max(0.0, kill.stall_to_next_entry - kill.pause_left_at_kill)
                )
            if kill.stall_to_completion is not None:
                figures["completion"].append(kill.stall_to_completion)
            figures["takeover reported"].append(kill.takeover_after)
    return figures


def journaling(count: int) -> dict[tuple[str, str], list[float]]:
    """Model-step times by (lab, mode), one request to each series per round."""
    with contextlib.ExitStack() as stack:
        labs = {
            "one node": stack.enter_context(Lab(echo=lambda message: None)),
            "3-node cluster": stack.enter_context(Lab(echo=lambda message: None, cluster=3)),
        }
        series: dict[tuple[str, str], tuple[httpx.Client, str]] = {}
        for name, lab in labs.items():
            for mode in ("naive", "journaled"):
                service = f"OneStep_{mode}"
                lane = lab.stub.open_lane(SCRIPTS["steady"], name=service.lower())
                onestep = DeckTarget(mode, app="paidtwice.agent.onestep:app", pause=None)
                agent = stack.enter_context(lab.launch(onestep, lane, service)[0])
                agent.start()
                lab.admin.register_deployment(agent.uri)
                client = stack.enter_context(httpx.Client(base_url=lab.server.ingress_url, timeout=30.0))
                series[(name, mode)] = (client, service)
        steps: dict[tuple[str, str], list[float]] = {key: [] for key in series}
        for i in range(count + 10):
            for key, (client, service) in series.items():
                answer = client.post(f"/{service}/run", json=f"question {i}")
                answer.raise_for_status()
                if i >= 10:  # the first calls warm connections up
                    steps[key].append(float(answer.json()["step_ms"]))
        return steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--invocations", type=int, default=200)
    parser.add_argument("--skip-deck", action="store_true")
    parser.add_argument("--skip-stalls", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    load_before = load_average()
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    if not args.skip_deck:
        one, one_ok, one_bad = deck_time(1)
        three, three_ok, three_bad = deck_time(3)
        say("deck, every row at once")
        say(f"  one node        {one:7.1f} s  every row matches: {one_ok} {' '.join(one_bad)}")
        say(f"  3-node cluster  {three:7.1f} s  every row matches: {three_ok} {' '.join(three_bad)}")
        say(f"  cluster / one node: {three / one:.2f}")
    if not args.skip_stalls:
        say(f"stall after a leader kill, {max(5, args.kills)} kills in the pause")
        for name, values in stalls(max(5, args.kills)).items():
            if values:
                say(f"  to {name:30} median {statistics.median(values):6.2f} s  max {max(values):6.2f} s")
    say(f"journaling a model call, {args.invocations} invocations per mode, zero-latency stub")
    header = ("naive p50", "p99", "journaled p50", "p99", "added p50", "p99")
    say(f"  {'':16} " + " ".join(f"{h:>13}" for h in header))
    steps = journaling(args.invocations)
    for name in ("one node", "3-node cluster"):
        naive, journaled = steps[(name, "naive")], steps[(name, "journaled")]
        n50, n99 = percentile(naive, 0.5), percentile(naive, 0.99)
        j50, j99 = percentile(journaled, 0.5), percentile(journaled, 0.99)
        cells = [f"{v:.2f} ms" for v in (n50, n99, j50, j99)]
        cells += [f"{j50 - n50:+.2f} ms", f"{j99 - n99:+.2f} ms"]
        say(f"  {name:16} " + " ".join(f"{c:>13}" for c in cells))
    say(f"(bench took {time.monotonic() - started:.1f} s, on a machine shared with other work)")
    write_text("cluster", "\n".join(lines), load=f"{load_before} to {load_average()}")


if __name__ == "__main__":
    main()
