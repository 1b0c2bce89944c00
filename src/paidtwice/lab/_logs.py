"""A run's logs as its record lists them: the stub's model calls and tool runs, and the attempts the agent's
wire showed. The deck, the sweep and the soak read them the same way."""

from __future__ import annotations

from collections.abc import Sequence

from paidtwice.agent import MISMATCH_ERROR_CODE, AgentAttempt, number_attempts
from paidtwice.lab._bill import extra_calls, price_call
from paidtwice.recover import MISMATCH_CODE
from paidtwice.results import AttemptLine, ModelLogLine, ToolLogLine
from paidtwice.stub import NO_TOKENS, ModelCall, ToolRun

__all__ = ["attempt_log_of", "mismatches_of", "model_log_of", "tool_log_of"]


def model_log_of(
    calls: Sequence[ModelCall],
    started: float,
    *,
    price_model: str,
    clean_turns: Sequence[int] | None = None,
) -> tuple[ModelLogLine, ...]:
    """The stub ledger's calls of one invocation, timed from `started`, each billed at `price_model`; which
    are extra as `extra_calls` says (against a clean run's turns, when given)."""
    extra = {id(c) for c in extra_calls(calls, clean_turns)}
    return tuple(
        ModelLogLine(
            c.call,
            c.turn,
            c.ask,
            c.answer.decision,
            c.answer.summary(),
            c.delivered,
            round(c.started - started, 3),
            round(c.finished - started, 3) if c.finished is not None else None,
            usage=c.billed or NO_TOKENS,
            cost_usd=price_call(c, price_model),
            extra=id(c) in extra,
        )
        for c in calls
    )


def tool_log_of(runs: Sequence[ToolRun], started: float) -> tuple[ToolLogLine, ...]:
    """The stub's tool runs of one invocation, timed from `started`."""
    return tuple(ToolLogLine(t.call, t.tool, t.delivered, round(t.started - started, 3)) for t in runs)


def attempt_log_of(
    agent: Sequence[AgentAttempt], total: int, status: str, started: float
) -> tuple[AttemptLine, ...]:
    """Every attempt in order: those that reached the agent as the wire showed them, the others in between
    (and after, when polling saw more) as having found the agent down."""
    reached = dict(zip(number_attempts(agent), agent, strict=True))
    lines = []
    for number in range(1, total + 1):
        attempt = reached.get(number)
        if attempt is None:
            lines.append(AttemptLine(number, False, None, None, "agent down"))
            continue
        if attempt.error_code is not None:
            outcome = (
                MISMATCH_CODE if attempt.error_code == MISMATCH_ERROR_CODE else f"error {attempt.error_code}"
            )
        elif attempt.last_event == "end":
            outcome = "completed" if status == "completed" else "ended"
        elif attempt.last_event == "suspend":
            outcome = "suspended"
        else:
            outcome = "cut off"
        ended = round(attempt.ended - started, 3) if attempt.ended is not None else None
        lines.append(
            AttemptLine(number, True, round(attempt.at - started, 3), attempt.retry, outcome, ended=ended)
        )
    return tuple(lines)


def mismatches_of(agent: Sequence[AgentAttempt]) -> int:
    """Attempts that reached the agent and failed with a journal mismatch, from the code it sent."""
    return sum(1 for attempt in agent if attempt.error_code == MISMATCH_ERROR_CODE)
