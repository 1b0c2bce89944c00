"""What an offline replay found (`replay-check`): a verdict per journal, the model calls made outside it."""

from __future__ import annotations

from dataclasses import dataclass

from paidtwice._words import entry_at

__all__ = ["OutsideCall", "ReplayResult"]


@dataclass(frozen=True)
class OutsideCall:
    """A model call the code made outside the journal during an offline replay, answered by the stub."""

    number: int
    """1-based among the replay's calls."""
    url: str
    """Where the code sent it (it went to the stub instead)."""
    turn: int
    """The conversation turn the stub read from the request."""
    ask: int
    """Which ask of that turn the stub answered (the recorded run's ask counted as the first)."""
    answer: str
    """What the stub answered: the tool call it asked for, or the text."""
    during_replay: bool
    """True while recorded entries were still being replayed: production pays for such a call again on
    every replay. False past the journal's end: work the code would do live next."""


@dataclass(frozen=True)
class ReplayResult:
    """The verdict on one journal replayed against the code."""

    path: str | None
    """The journal file, if it came from one."""
    invocation_id: str
    """The journal's invocation."""
    service: str
    """Its service."""
    handler: str
    """Its handler."""
    verdict: str
    """replays, continues, diverges, fails or undecided (see the module's docstring)."""
    index: int | None
    """Where it diverges: the journal's entry index (commands and notifications, 0 is the input), as the
    journal file and `paidtwice journal` number entries; None when the journal has no command there."""
    recorded: str | None
    """What the journal holds at that entry, read from the journal ("run weather")."""
    attempted: str | None
    """What the code attempted there instead ("run model", "handler return")."""
    labels_agree: bool | None
    """Whether the SDK message's "recorded"/"attempted" labels agree with the journal."""
    message: str
    """The SDK's own message, or what stopped the replay."""
    next_command: str | None
    """For a journal that continues: what the code would do next, live ("sleep", "run weather", "output")."""
    outside_calls: tuple[OutsideCall, ...]
    """Model calls outside the journal, each answered by the stub."""
    past_end: str
    """What was done about work past the journal's end (stopped before a step ran, calls to the stub)."""
    entries: int
    """Entries in the journal."""
    seed: str
    """The random seed used, and where it came from."""
    recorded_commands: tuple[str, ...] = ()
    """For a divergence: the journal's commands by command index, 0 to `command_index` ("input", "run
    weather"). The SDK checks each replayed command against the journal, so the code attempted the same ones
    up to `command_index - 1`, then `attempted`. Empty for the other verdicts."""
    command_index: int | None = None
    """Where it diverges by the SDK's count: the command index its mismatch message names (commands only),
    shown beside the entry index, never in its place."""
    command_entries: tuple[int, ...] = ()
    """The journal entry index of each of `recorded_commands`."""

    @property
    def where(self) -> str:
        """Where it diverges: "entry 5 (command index 3)"."""
        return entry_at(self.index, self.command_index)

    @property
    def attempted_commands(self) -> tuple[str, ...]:
        """For a divergence: what the code attempted by command index, 0 to `command_index`."""
        if self.verdict != "diverges" or self.command_index is None or self.attempted is None:
            return ()
        return (*self.recorded_commands[: self.command_index], self.attempted)

    @property
    def ok(self) -> bool:
        """The journal replays, or replays and continues."""
        return self.verdict in ("replays", "continues")

    @property
    def calls_during_replay(self) -> int:
        """Model calls production pays for again on every replay of this journal."""
        return sum(1 for call in self.outside_calls if call.during_replay)

    def describe(self) -> str:
        """The verdict in one line."""
        name = self.path or self.invocation_id
        if self.verdict == "diverges":
            return f"{name}: diverges at {self.where}: {self.recorded} recorded, {self.attempted} attempted"
        if self.verdict == "continues":
            return f"{name}: continues; next, live: {self.next_command}"
        if self.verdict in ("fails", "undecided"):
            return f"{name}: {self.verdict}: {self.message.splitlines()[0] if self.message else ''}"
        return f"{name}: replays"
