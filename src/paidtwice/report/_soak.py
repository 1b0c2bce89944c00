"""Plain-text reports of a soak: its progress line and its result."""

from __future__ import annotations

from paidtwice._words import count
from paidtwice.report._text import tokens, usd
from paidtwice.results import SoakRecord
from paidtwice.soak import SoakProgress

__all__ = ["format_soak", "format_soak_progress"]


def format_soak_progress(progress: SoakProgress) -> str:
    """One line: sent, completed, kills done (node kills too, on a cluster), rate."""
    nodes = (
        f", node kills {progress.node_kills}/{progress.node_kills_planned}"
        if progress.node_kills_planned
        else ""
    )
    return (
        f"soak: sent {progress.sent}/{progress.invocations}, completed {progress.completed}, "
        f"kills {progress.kills}/{progress.kills_planned}{nodes}, {progress.rate:.1f} completed/s, "
        f"{progress.elapsed:.0f}s"
    )


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _journaled_as(steps: tuple[str, ...]) -> str:
    if not steps:
        return "none journaled"
    return "journaled as " + ", ".join(f"'{step}'" for step in steps)


def format_soak(record: SoakRecord) -> str:
    """What the soak measured, and what is wrong if anything is."""
    memory = record.peak_memory
    lines = [f"soaked {record.app}"] if record.app else []
    lines.append(
        f"sent {record.sent}, completed {record.completed}, paused {record.paused}, "
        f"lost {record.lost}, unfinished {record.unfinished}"
    )
    if len(record.waves) > 1:
        sizes = ", ".join(map(str, record.waves))
        lines.append(f"sent in {len(record.waves)} waves ({sizes}), each just before its node kill")
    # Tool runs are the deck's (the stub's tool endpoints): a user's app has its model calls counted only.
    tools = "" if record.app else f", {count(record.clean_tool_runs, 'tool run')}"
    lines += [
        f"clean invocation: {count(record.clean_model_calls, 'model call')} "
        f"({_journaled_as(record.model_steps)}){tools} (measured before the soak)",
        f"model calls {record.model_calls}: {record.extra_model_calls} beyond the clean count "
        f"(bound: {record.bound} cut off by {count(record.kills, 'agent kill')}"
        + (f" and {count(len(record.node_kills), 'node kill')})" if record.node_kills else ")"),
    ]
    for number, kill in enumerate(record.kill_snapshots, start=1):
        running = "" if kill.running is None else f"{kill.running} running, "
        lines.append(
            f"  kill {number}: {running}{kill.open_calls} open, {kill.unjournaled_answers} answered, not "
            f"journaled, {count(kill.invocations_lacking, 'invocation')} to replay, down {kill.down:.2f}s"
        )
    idle = [str(n) for n, kill in enumerate(record.kill_snapshots, start=1) if kill.running == 0]
    if idle:
        lines.append(
            f"  {'kills' if len(idle) > 1 else 'kill'} {', '.join(idle)} came after every invocation had "
            "settled and tested nothing: send more invocations, or kill sooner (--kill-every)"
        )
    for node in record.node_kills:
        led = ", ".join(map(str, node.partitions)) or "none"
        lines.append(
            f"  node kill: {node.node} (led partitions {led}; {count(node.running, 'invocation')} running on "
            f"them), down {node.down:.1f}s, {count(node.cut_off, 'model call')} cut off"
        )
    lines += [
        f"paid {tokens(record.usage.total_tokens)} tokens, {usd(record.cost_usd)} at {record.price_model} "
        f"(prices as of {record.prices_as_of}); the kills added {usd(record.extra_cost_usd)}",
        "tool runs: not counted (your app's model calls are; tool runs are the deck agent's)"
        if record.app
        else f"tool runs beyond the clean count: {record.extra_tool_runs}",
        f"throughput {record.throughput} completed/s over {record.wall_time:.1f}s; completion time "
        f"p50 {_seconds(record.p50_completion)}, p99 {_seconds(record.p99_completion)}",
        f"peak memory: server {memory.server:.0f} MiB, agent {memory.agent:.0f} MiB, "
        f"paidtwice {memory.paidtwice:.0f} MiB",
    ]
    if record.gave_up:
        lines.append(f"gave up waiting: {record.gave_up}")
    problems = record.problems()
    lines.append("ok" if not problems else "NOT OK: " + "; ".join(problems))
    return "\n".join(lines)
