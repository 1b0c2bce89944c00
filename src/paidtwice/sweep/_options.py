"""A sweep's options, as small frozen objects built once (by the CLI, a config, a test) and passed down:
where the model's answers come from (`Answers`), what the model stub does (`ModelStub`), and how the
points are killed and run (`KillPlan`). What is swept is a `paidtwice.targets.TargetSpec`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from paidtwice._exceptions import UsageError
from paidtwice.lab import DEFAULT_RESTART_DELAY, check_price_model
from paidtwice.stub import (
    AUTO,
    DEFAULT_SEED,
    VARIATIONS,
    AutoBook,
    RecordingScript,
    Script,
    auto_script,
    recording_script,
    script_by_name,
    script_for,
)

__all__ = ["DEFAULT_RETRIES", "Answers", "KillPlan", "ModelStub", "Shard", "shard_of"]

DEFAULT_RETRIES = 2
"""How many times a point whose kill missed its moment is run again before it is called not placed: a miss
comes of a machine busy at the wrong instant, which seldom lasts three tries."""

_T = TypeVar("_T")

Shard = tuple[int, int]
"""(K, N): the K-th (from 1) of N shares of a sweep's crash points."""


def shard_of(jobs: Sequence[_T], shard: Shard) -> list[_T]:
    """The K-th of N shares of `jobs`, dealt in turn (job n goes to shard n mod N + 1), so each shard gets
    points of every handler and every moment, and the shares cover the jobs once."""
    k, n = shard
    if not 1 <= k <= n:
        raise UsageError(f"no shard {k}/{n}: K is from 1 to N")
    return [job for i, job in enumerate(jobs) if i % n == k - 1]


@dataclass(frozen=True)
class ModelStub:
    """What the stub's model does beyond the script: how long it takes, and what its calls cost."""

    latency: float = 0.0
    """Seconds the model takes per answer."""
    price_model: str | None = None
    """The model the calls are priced as; None: the lab's own."""

    def check(self) -> None:
        if self.latency < 0:
            raise UsageError(f"a model latency cannot be negative ({self.latency:g})")
        if self.price_model is not None:
            check_price_model(self.price_model)


@dataclass(frozen=True)
class KillPlan:
    """How the crash points are run: the restart delay after each kill, how many at once, which share, how
    many times a missed kill is tried again."""

    restart_delay: float = DEFAULT_RESTART_DELAY
    """Seconds the agent stays down after each kill."""
    parallel: int = 16
    """Crash points run at once."""
    shard: Shard | None = None
    """Only the K-th of N shares of the crash points (every clean run is made: the points come from it)."""
    retries: int = DEFAULT_RETRIES
    """Times a point whose kill missed its moment (or whose agent never reached it) is run again, on an agent
    and an invocation of its user_code, before the point is called not placed."""

    def check(self) -> None:
        if self.retries < 0:
            raise UsageError(f"retries cannot be negative ({self.retries})")


@dataclass(frozen=True)
class Answers:
    """Where the model's answers come from: the stub's named scripts (the deck's agent), a script file's
    variations, answers made from each request (`auto`), or a real model recorded once."""

    script: str | Path | None = None
    """A user's code: the script file, or `auto` (also None): answers made from each request."""
    variations: tuple[str, ...] = VARIATIONS
    """The variations swept (the deck's agent: the stub's scripts of those names)."""
    seed: int = DEFAULT_SEED
    """What auto answers and made inputs are derived from."""
    write_script: Path | None = None
    """With auto answers: the file the answers given are written to, once the sweep is done."""
    upstream: str | None = None
    """With `record`: the real model's base URL; each call answered by it once."""
    record: Path | None = None
    """With `upstream`: the file the real model's answers are written to, as a script file."""
    every_tool: bool = False
    """With auto answers: once swept, each tool offered that no answer called gets a clean run per variation
    whose first turns call it first, and its points are swept too (`sweep --every-tool`)."""

    def check(self, *, user_code: bool) -> RecordingScript | None:
        """`UsageError` for options that do not go together; the recording script when recording. `user_code`:
        the user's code, not the deck's agent."""
        unknown = [name for name in self.variations if name not in VARIATIONS]
        if unknown or not self.variations:
            known = ", ".join(VARIATIONS)
            raise UsageError(f"unknown script {', '.join(unknown) or '(none)'} (known: {known})")
        auto = user_code and (self.script is None or str(self.script) == AUTO)
        if self.write_script is not None and not auto:
            raise UsageError(
                "--write-script writes auto answers: it goes with --app or --cmd and no script file"
            )
        if self.every_tool and (not auto or self.upstream is not None or self.record is not None):
            raise UsageError(
                "--every-tool chooses auto answers that call each tool: it goes with --app or --cmd, "
                "no script file and no recording"
            )
        return self.recording(user_code=user_code, auto=auto)

    def scripts(
        self, *, user_code: bool, book: AutoBook, recording: RecordingScript | None
    ) -> list[tuple[str, Script]]:
        """(variation, script) for each variation: the stub's named scripts for the deck's agent; for the
        user's code, the recording, or the script file's variation (auto answers without one)."""
        if not user_code:
            return [(name, script_by_name(name)) for name in self.variations]
        if recording is not None:
            return [(name, recording) for name in self.variations]
        return [(name, script_for(self.script, name, seed=self.seed, book=book)) for name in self.variations]

    def recording(self, *, user_code: bool, auto: bool) -> RecordingScript | None:
        """The recording script of a sweep that records (`upstream` and `record` given); None otherwise."""
        if self.upstream is None and self.record is None:
            return None
        if self.upstream is None or self.record is None:
            raise UsageError("recording needs both the file (--record FILE) and the model (--upstream URL)")
        if not user_code or not auto:
            raise UsageError("recording answers goes with --app or --cmd and no --script")
        if list(self.variations) != ["steady"]:
            raise UsageError(
                "a recording answers each call as the model did: sweep it with --variation steady"
            )
        if not self.upstream.startswith(("http://", "https://")):
            raise UsageError(f"--upstream {self.upstream!r} is not an http(s) URL")
        return recording_script(self.upstream)

    def write(self, book: AutoBook, recording: RecordingScript | None) -> None:
        """Once the sweep is done: the auto answers given, and the recorded ones, to their files."""
        if self.write_script is not None:
            auto_script("steady", seed=self.seed, book=book).write(self.write_script)
        if recording is not None and self.record is not None:
            recording.write(self.record)
