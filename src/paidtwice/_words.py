"""Numbers in words: the noun that fits the count, and a difference with its sign; a swept agent's name."""

from __future__ import annotations

__all__ = ["agent_name", "count", "signed"]


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
