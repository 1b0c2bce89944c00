"""A replay-check for people: one row per journal, then the details of each that does not simply replay."""

from __future__ import annotations

from paidtwice.replay._results import ReplayResult

__all__ = ["format_replay_check"]


def format_replay_check(results: list[ReplayResult]) -> str:
    """The table: one row per journal, then the details of each that does not simply replay."""
    header = ("journal", "verdict", "calls outside", "next, live")
    rows = []
    for r in results:
        verdict = f"diverges at {r.where}" if r.verdict == "diverges" else r.verdict
        calls = f"{r.calls_during_replay}" + (
            f" (+{len(r.outside_calls) - r.calls_during_replay} past end)"
            if len(r.outside_calls) > r.calls_during_replay
            else ""
        )
        rows.append(
            (
                r.path or r.invocation_id,
                verdict,
                calls,
                r.next_command or "",
            )
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    for r in results:
        if r.verdict == "replays" and not r.outside_calls:
            continue
        lines.append("")
        lines.append(
            f"{r.path or r.invocation_id} ({r.service}/{r.handler}, {r.entries} entries): {r.verdict}"
        )
        if r.verdict == "diverges":
            agree = "agree" if r.labels_agree else "DISAGREE (the SDK swapped them)"
            lines.append(f"  recorded:  {r.recorded}")
            lines.append(f"  attempted: {r.attempted}")
            lines.append(f"  the message's labels {agree} with the journal")
        if r.message and r.verdict != "continues":
            lines.extend("  | " + line for line in r.message.splitlines())
        for call in r.outside_calls:
            when = "during the replay (paid again on every replay)" if call.during_replay else "past the end"
            lines.append(
                f"  model call {call.number}, turn {call.turn} ask {call.ask}, {when}: {call.answer}"
            )
        lines.append(f"  past the journal's end: {r.past_end}")
    return "\n".join(lines)
