"""What a retry policy predicts: when retries land, and so how many find the agent down.

Restate waits `min(initial * factor^k, max)` before retry k+1 and adds up to 30% of that as jitter. The n-th
retry therefore lands somewhere in [S_n, 1.3 * S_n] after the failure that started the backoff, S_n being the
sum of the first n nominal intervals. For a measured down time D, the retries that find the agent down are at
least those whose latest landing is before D and at most those whose earliest landing is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from paidtwice._exceptions import ExperimentError
from paidtwice.agent import DECK_RETRY

__all__ = [
    "DECK_POLICY",
    "JITTER",
    "SERVER_RETRY_POLICY",
    "Backoff",
    "PaidCallPrediction",
    "RetryPolicy",
    "ServerDefaultPolicy",
    "ServerRetryPolicy",
    "predict_paid_calls",
    "retries_while_down",
    "server_default_policy",
]

JITTER = 0.3
"""Restate's jitter: up to this share of each interval is added to it."""

_PER_ATTEMPT = 0.02
"""Seconds an attempt that finds the agent down takes before its backoff starts (connect, fail, record)."""


@dataclass(frozen=True)
class RetryPolicy:
    """An invocation retry policy a row sets on its own agent (`restate.InvocationRetryPolicy`)."""

    max_attempts: int
    """Attempts in all, the first included."""
    on_max_attempts: Literal["pause", "kill"] = "pause"
    """What Restate does once they are spent."""
    initial_interval: float = 0.2
    """Seconds before the first retry."""
    max_interval: float = 2.0
    """Cap on the interval, seconds."""
    exponentiation_factor: float = 2.0
    """Growth of the interval per retry."""

    def to_env(self) -> str:
        """The agent's PAIDTWICE_RETRY_POLICY."""
        return json.dumps(
            {
                "max_attempts": self.max_attempts,
                "on_max_attempts": self.on_max_attempts,
                "initial_interval_s": self.initial_interval,
                "max_interval_s": self.max_interval,
                "exponentiation_factor": self.exponentiation_factor,
            }
        )

    def backoff(self) -> Backoff:
        """Its schedule."""
        return Backoff(
            self.initial_interval, self.exponentiation_factor, self.max_interval, self.max_attempts
        )

    def describe(self) -> str:
        return (
            f"{self.max_attempts} attempts then {self.on_max_attempts}, {self.initial_interval * 1000:g} ms "
            f"x{self.exponentiation_factor:g} up to {self.max_interval * 1000:g} ms"
        )


@dataclass(frozen=True)
class ServerRetryPolicy:
    """No retry policy on the agent's service: the server's default applies (restate-server's
    `default-retry-policy`, read from the server itself by the row that predicts it)."""

    def to_env(self) -> str:
        """The agent's PAIDTWICE_RETRY_POLICY: "server", no policy of its own."""
        return "server"

    def describe(self) -> str:
        return "the server's default"


SERVER_RETRY_POLICY = ServerRetryPolicy()

DECK_POLICY = RetryPolicy(
    max_attempts=int(DECK_RETRY["max_attempts"]),
    on_max_attempts=DECK_RETRY["on_max_attempts"],
    initial_interval=float(DECK_RETRY["initial_interval_s"]),
    max_interval=float(DECK_RETRY["max_interval_s"]),
    exponentiation_factor=float(DECK_RETRY["exponentiation_factor"]),
)
"""The policy of a row that sets none (`Experiment.retry_policy` None), as the agent runs it."""


@dataclass(frozen=True)
class Backoff:
    """The retry policy's schedule."""

    initial: float
    """First interval, seconds."""
    factor: float
    """Growth per retry."""
    maximum: float
    """Cap on an interval, seconds."""
    max_attempts: int
    """Attempts in all, the first included."""

    @classmethod
    def from_policy(cls, policy: object) -> Backoff:
        """From a `restate.InvocationRetryPolicy`."""

        def seconds(value: object, default: float) -> float:
            return value.total_seconds() if isinstance(value, timedelta) else default

        return cls(
            initial=seconds(getattr(policy, "initial_interval", None), 0.5),
            factor=float(getattr(policy, "exponentiation_factor", None) or 2.0),
            maximum=seconds(getattr(policy, "max_interval", None), 60.0),
            max_attempts=int(getattr(policy, "max_attempts", None) or 70),
        )

    def intervals(self) -> list[float]:
        """Nominal waits before retries 1 .. max_attempts-1."""
        waits, wait = [], self.initial
        for _ in range(self.max_attempts - 1):
            waits.append(min(wait, self.maximum))
            wait = min(wait * self.factor, self.maximum)
        return waits

    def total_wait(self) -> float:
        return sum(self.intervals())


@dataclass(frozen=True)
class PaidCallPrediction:
    """Paid model calls a never-healing mismatch costs, for one down time."""

    down_time: float
    """Measured seconds from the kill until the agent listened again."""
    fewest_down: int
    """Fewest retries that can land while the agent is down."""
    most_down: int
    """Most retries that can land while the agent is down."""
    max_attempts: int
    """The policy's attempts in all."""

    @property
    def range(self) -> tuple[int, int]:
        """(fewest, most) paid model calls: the first attempt plus each retry that reached the agent."""
        retries = self.max_attempts - 1
        return (1 + retries - self.most_down, 1 + retries - self.fewest_down)

    @property
    def paid_calls(self) -> int | None:
        """The paid calls, or None when jitter alone could change the count at this down time."""
        low, high = self.range
        return low if low == high else None


def predict_paid_calls(backoff: Backoff, down_time: float) -> PaidCallPrediction:
    earliest = latest = 0.0
    fewest = most = 0
    for n, wait in enumerate(backoff.intervals(), start=1):
        earliest += wait
        latest += wait * (1 + JITTER)
        if earliest + _PER_ATTEMPT * (n - 1) < down_time:
            most += 1
        if latest + _PER_ATTEMPT * n < down_time:
            fewest += 1
    return PaidCallPrediction(down_time, fewest, most, backoff.max_attempts)


_SERVER_FLAGS = {
    "initial": "RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL",
    "factor": "RESTATE_DEFAULT_RETRY_POLICY__EXPONENTIATION_FACTOR",
    "maximum": "RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL",
    "max_attempts": "RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS",
}
"""The restate-server settings of its default retry policy, by the `Backoff` field each sets."""


def retries_while_down(
    policy: RetryPolicy | ServerRetryPolicy | None,
    down_time: float,
    server_flags: Mapping[str, str],
) -> int:
    """Retries due while the agent is down `down_time` seconds after a kill under `policy` (None: the
    deck's): those whose window opens before it comes back (Restate's jitter only makes a retry later). Under
    the server's default, as `server_flags` set it whole; else 0 (not known). A restart waits for as many
    to have found the agent down, so a busy server's late retries count as they would on time."""
    if isinstance(policy, ServerRetryPolicy):
        if any(flag not in server_flags for flag in _SERVER_FLAGS.values()):
            return 0
        backoff = Backoff(
            initial=_seconds(server_flags[_SERVER_FLAGS["initial"]]),
            factor=float(server_flags[_SERVER_FLAGS["factor"]]),
            maximum=_seconds(server_flags[_SERVER_FLAGS["maximum"]]),
            max_attempts=int(server_flags[_SERVER_FLAGS["max_attempts"]]),
        )
    else:
        backoff = (policy or DECK_POLICY).backoff()
    return predict_paid_calls(backoff, down_time).most_down


@dataclass(frozen=True)
class ServerDefaultPolicy:
    """The retry policy a restate-server applies to a service that sets none, as the server printed it."""

    backoff: Backoff
    """Its schedule."""
    on_max_attempts: str
    """What the server does once the attempts are spent ("pause" or "kill")."""
    read_from: str
    """Where it was read: the server's version and the command."""

    def describe(self) -> str:
        b = self.backoff
        return (
            f"{b.max_attempts} attempts then {self.on_max_attempts}, {b.initial * 1000:g} ms "
            f"x{b.factor:g} up to {b.maximum:g} s"
        )


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _seconds(text: str) -> float:
    """A humantime duration as restate-server prints it ("500ms", "1m", "1s 500ms") in seconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
    if not parts or any(unit not in _UNITS for _, unit in parts):
        raise ExperimentError(f"cannot read the duration {text!r} in restate-server's configuration")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def server_default_policy(config: Mapping[str, Any], *, version: str) -> ServerDefaultPolicy:
    """The `[default-retry-policy]` of a configuration `restate-server --dump-config` printed."""
    section = config.get("default-retry-policy")
    if not isinstance(section, Mapping):
        raise ExperimentError(
            f"restate-server {version} printed no [default-retry-policy] in its configuration"
        )
    backoff = Backoff(
        initial=_seconds(str(section["initial-interval"])),
        factor=float(section["exponentiation-factor"]),
        maximum=_seconds(str(section["max-interval"])),
        max_attempts=int(section["max-attempts"]),
    )
    return ServerDefaultPolicy(
        backoff,
        str(section["on-max-attempts"]),
        read_from=f"restate-server {version} --dump-config, [default-retry-policy]",
    )
