"""Numbers in words: the noun that fits the count, and a difference with its sign; a swept agent's name; where
in a journal something is; an exception in one line.

One index names a journal entry everywhere: the journal's own entry index, as `sys_journal`, the journal file,
`paidtwice journal` and the sweep's points count it (commands and notifications; 0 is the input). The SDK and
restate-server count commands only (a journal mismatch's "(index '2')"): that command index may be shown
beside the entry, named as such, never in its place.
"""

from __future__ import annotations

__all__ = ["agent_name", "count", "entry_at", "error_line", "signed"]


def count(number: int, noun: str, plural: str | None = None, *, sign: bool = False) -> str:
    """`number` and the noun that fits it: "1 tool call", "4 attempts", "2 retries" (given `plural`);
    with `sign`, a difference: "+1 model call", "-2 step runs"."""
    return f"{signed(number) if sign else number} {noun if abs(number) == 1 else plural or noun + 's'}"


def signed(number: int) -> str:
    """A difference with its sign: "+1", "-1", "0"."""
    return f"{number:+d}" if number else "0"


def agent_name(mode: str) -> str:
    """A swept agent by its mode, in a heading: "naive agent", "journaled agent"; a user's app by its service
    and handler ("Travel/quote") and a command's label ("Agent (node agent.ts)") as they are."""
    return f"{mode} agent" if mode in ("naive", "journaled", "app") else mode


def entry_at(index: int | None, command_index: int | None = None) -> str:
    """Where in a journal: "entry 5 (command index 3)", "entry 5"; "command index 3 (no such entry in the
    journal)" when only the SDK's command index is known."""
    if index is None:
        if command_index is None:
            return "an unknown entry"
        return f"command index {command_index} (no such entry in the journal)"
    return f"entry {index}" + ("" if command_index is None else f" (command index {command_index})")


def error_line(err: BaseException, *, most: int = 300) -> str:
    """An exception in one line: its type and the first line of its message that is not blank, cut at
    `most` characters. A library's message often runs on (pydantic's ends with "For further information
    visit ..."): its first line names what failed."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    said = lines[0] if lines else ""
    if len(said) > most:
        said = said[: most - 3] + "..."
    return f"{type(err).__name__}: {said}" if said else type(err).__name__
