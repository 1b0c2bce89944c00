"""A run's behaviour on a journal mismatch in a few lines: for rows that set one agent's behaviours side by
side (protocol, attempts, RT0016s, final status, and what `recover` offered for it)."""

from __future__ import annotations

from paidtwice._words import count
from paidtwice.results import RunRecord

__all__ = ["behaviour_lines"]


def behaviour_lines(run: RunRecord) -> str:
    """A run's attempts, protocol and final status, and what `recover` offered for it, in a few lines."""
    protocol = f"protocol {run.protocol_version}" if run.protocol_version is not None else "protocol ?"
    flags = f" ({', '.join(run.server_flags)})" if run.server_flags else ""
    head = (
        f"{run.name}: {protocol}{flags}; {count(run.attempts, 'attempt')} "
        f"({run.attempts_while_down} while the agent was down), {run.mismatches} RT0016, {run.status}"
    )
    offers = [f"  recover offers {offer}" for offer in run.recover_offers]
    return "\n".join([head, *offers])
