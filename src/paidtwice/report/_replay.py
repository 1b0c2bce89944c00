"""A replay-check for people: one row per journal, then the details of each that does not simply replay.

A row and a result's details are made one result at a time (`replay_row`, `replay_details`), so
`replay-check DIR` keeps a few words per journal rather than every result; `format_replay_table` lays them
out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from paidtwice.results import ReplayResult

__all__ = ["format_replay_check", "format_replay_table", "replay_details", "replay_row"]

ReplayRow = tuple[str, str, str, str]
_HEADER: ReplayRow = ("journal", "verdict", "calls outside", "next, live")


def format_replay_check(results: list[ReplayResult]) -> str:
    """The table: one row per journal, then the details of each that does not simply replay."""
    return format_replay_table(
        [replay_row(r) for r in results], [line for r in results for line in replay_details(r)]
    )


def format_replay_table(rows: Sequence[ReplayRow], details: Iterable[str]) -> str:
    """The rows under their header, columns as wide as their widest cell, then the details' lines."""
    widths = [max(len(row[i]) for row in [_HEADER, *rows]) for i in range(len(_HEADER))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [_HEADER, *rows]
    ]
    lines.extend(details)
    return "\n".join(lines)


def replay_row(r: ReplayResult) -> ReplayRow:
    """A result's row: journal, verdict, calls outside the journal, what it would do next live."""
    verdict = f"diverges at {r.where}" if r.verdict == "diverges" else r.verdict
    calls = f"{r.calls_during_replay}" + (
        f" (+{len(r.outside_calls) - r.calls_during_replay} past end)"
        if len(r.outside_calls) > r.calls_during_replay
        else ""
    )
    return (r.path or r.invocation_id, verdict, calls, r.next_command or "")


def replay_details(r: ReplayResult) -> list[str]:
    """The lines under the table about a result that does not simply replay (none for one that does)."""
    if r.verdict == "replays" and not r.outside_calls:
        return []
    lines = ["", f"{r.path or r.invocation_id} ({r.service}/{r.handler}, {r.entries} entries): {r.verdict}"]
    if r.verdict == "diverges":
        agree = "agree" if r.labels_agree else "DISAGREE (the SDK swapped them)"
        lines.append(f"  recorded:  {r.recorded}")
        lines.append(f"  attempted: {r.attempted}")
        lines.append(f"  the message's labels {agree} with the journal")
    if r.message and r.verdict != "continues":
        lines.extend("  | " + line for line in r.message.splitlines())
    for call in r.outside_calls:
        when = "during the replay (paid again on every replay)" if call.during_replay else "past the end"
        lines.append(f"  model call {call.number}, turn {call.turn} ask {call.ask}, {when}: {call.answer}")
    lines.append(f"  past the journal's end: {r.past_end}")
    return lines
