"""What `paidtwice watch` reports: one record per stuck invocation, and the snapshot that holds them.

A snapshot is written as one JSON record of kind "watch" (see `kinds()`), which `paidtwice report` reads back.
No record holds a request header: the admin URL is kept, the credentials passed with `--header` never are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from paidtwice.results._deck import Mismatch
from paidtwice.stub import NO_TOKENS, TokenUsage

__all__ = ["AttemptCost", "Reason", "StuckInvocation", "WatchSnapshot", "WayOutLine"]

Reason = Literal["journal-mismatch", "other-error", "no-failure-recorded"]
"""What its last failure was: a journal mismatch (RT0016), any other error, or none the server kept."""


@dataclass(frozen=True)
class AttemptCost:
    """What one attempt of a handler pays for outside its journal, as a profile measured it."""

    calls: float
    """Model calls an attempt makes outside the journal (replayed steps cost nothing; these are paid
    again)."""
    usage: TokenUsage = NO_TOKENS
    """Tokens those calls bill, per attempt."""
    priced: bool = True
    """Whether `usage` was measured; a profile without token counts (lint's findings) prices nothing."""
    bound: Literal["measured", "at most", "call sites"] = "measured"
    """How `calls` reads: measured per attempt, an upper bound, or the call sites lint found (how many of
    them an attempt reaches is not known)."""
    source: str = ""
    """Where the figures were read from."""


@dataclass(frozen=True)
class WayOutLine:
    """One of `recover`'s ways out, as watch lists it."""

    name: str
    """What to pass to `paidtwice recover --apply`."""
    title: str
    """What it does."""
    runs_again: tuple[str, ...]
    """Recorded steps that execute, and are paid for, again."""
    replay: str
    """Whether the code replays what it keeps, and why paidtwice thinks so."""


@dataclass(frozen=True)
class StuckInvocation:
    """One invocation retrying after a failure, or paused."""

    invocation_id: str
    """The invocation."""
    service: str
    """Its service."""
    handler: str
    """Its handler."""
    key: str | None
    """Its key (Virtual Objects and Workflows); None for a plain service."""
    deployment: str | None
    """The deployment it is pinned to."""
    status: str
    """sys_invocation.status when read: backing-off, running (an attempt under way), paused, ..."""
    state: Literal["retrying", "paused"]
    """Paused (waiting for someone), or retrying (any other status: backing off, or an attempt under way)."""
    reason: Reason
    """What its last failure was."""
    attempts: int | None
    """Attempts made so far; None where the server no longer says (it drops the count once paused) and this
    watch did not see it retry."""
    attempts_source: str
    """Where `attempts` was read from."""
    since: str
    """When it started failing: the first failure the server recorded for it (sys_journal_events), else
    when it was created (RFC 3339)."""
    last_start_at: str | None
    """When its latest attempt started."""
    next_retry_at: str | None
    """When the next attempt is due, while backing off."""
    error_code: str | None
    """Restate's code of the last failure ("RT0016" for a journal mismatch)."""
    last_error: str
    """The last failure's message."""
    mismatch: Mismatch | None
    """For a journal mismatch: the index and the two operations, read against the journal (`explain`)."""
    journal_model_steps: tuple[str, ...]
    """Model steps its journal holds (run entries named as the profile's model steps, or named like one):
    replayed from the journal, paid once."""
    per_attempt: AttemptCost | None
    """What each attempt pays outside the journal; None without a profile of its handler."""
    cost_per_attempt_usd: float | None
    """`per_attempt` in dollars at the snapshot's price model; None when not priced."""
    repaid_calls: float | None
    """Model calls paid again so far: every attempt after the first, times `per_attempt.calls`."""
    repaid_usd: float | None
    """Their price."""
    attempts_per_hour: float | None
    """How fast it retries now: from the current backoff (next_retry_at - last_start_at), else the average
    since it started failing; 0 once paused."""
    burn_usd_per_hour: float | None
    """Dollars per hour it costs while it retries at that pace: cost per attempt x attempts per hour."""
    ways_out: tuple[WayOutLine, ...]
    """`recover`'s ways out, in the order worth trying."""
    replay_verdict: str | None
    """With `--app`: replay-check's verdict of its journal against that code; None otherwise."""


@dataclass(frozen=True)
class WatchSnapshot:
    """Every stuck invocation on a Restate server at one moment."""

    taken_at: float
    """When it was read (seconds since the epoch)."""
    admin_url: str
    """The admin API read (headers passed with it are never kept)."""
    stuck: tuple[StuckInvocation, ...]
    """The invocations retrying after a failure, or paused, oldest failure first."""
    price_model: str
    """The model whose prices the dollars are at."""
    prices_as_of: str
    """The price data's date."""
    profile: str = ""
    """The profile the per-attempt costs come from ("" for none)."""
    app: str = ""
    """The code the journals were replay-checked against (`--app`; "" for none)."""

    @property
    def paused(self) -> int:
        return sum(1 for s in self.stuck if s.state == "paused")

    @property
    def burn_usd_per_hour(self) -> float:
        return sum(s.burn_usd_per_hour or 0.0 for s in self.stuck)
