"""The deck's weather agent (`paidtwice.agent.weather`) as the lab drives it from outside: where it is, what
it is asked, its two modes and the journal a clean run of each leaves.
Nothing here imports the agent's SDK."""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "CLEAN_JOURNALED_JOURNAL",
    "CLEAN_NAIVE_JOURNAL",
    "DECK_AGENT",
    "DECK_RETRY",
    "QUESTION",
    "AgentMode",
]

DECK_AGENT = "paidtwice.agent.weather:app"
"""The deck's agent, as MODULE:APP."""
QUESTION = "What should I wear in Paris today?"
"""What every deck run asks it."""
DECK_RETRY: dict[str, Any] = {
    "max_attempts": 20,
    "on_max_attempts": "pause",
    "initial_interval_s": 0.2,
    "max_interval_s": 2.0,
    "exponentiation_factor": 2.0,
}
"""The agent's retry policy unless a row sets its own, in the form of PAIDTWICE_RETRY_POLICY: 20 attempts (the
first included), then pause; the backoff doubles from 200 ms up to 2 s, so that the retries made while the
agent is down are told apart by the restart delay: Restate adds up to 30% jitter to each interval, and with
these intervals the windows in which the first five retries can land are apart by at least 0.3 s, room for a
busy server's late timers."""

AgentMode = Literal["naive", "journaled"]
"""How the deck's agents call the model: outside the journal, or journaled with ctx.run."""

CLEAN_NAIVE_JOURNAL = (
    "Command: Input",
    "Command: Run weather",
    "Notification: Run",
    "Command: Sleep",
    "Notification: Sleep",
    "Command: Output",
)
"""A clean naive run's journal, as the deck reads it: input, the weather run and its result, the pause and its
completion, the output."""

CLEAN_JOURNALED_JOURNAL = (
    "Command: Input",
    "Command: Run model",
    "Notification: Run",
    "Command: Run weather",
    "Notification: Run",
    "Command: Sleep",
    "Notification: Sleep",
    "Command: Run model",
    "Notification: Run",
    "Command: Output",
)
"""A clean journaled run's journal: the naive one with the two model decisions filled in (entries 1 and 7)."""
