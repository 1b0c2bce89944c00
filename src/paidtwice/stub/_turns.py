"""Script files: a user's own model answers, one per conversation turn, in JSON or TOML.

    [[turn]]
    text = "I'll convert that first."
    tool = "convert"
    arguments = { amount = 100, source = "EUR", target = "USD" }
    drift = ["Converting now.", "One moment, converting."]   # drifting: other words on each call
    changed = { text = "About 108 USD." }                    # changed: the answer from the 2nd ask on
    usage = { prompt_tokens = 1200, completion_tokens = 40 } # optional: the tokens this turn reports

    [[turn]]
    text = "100 EUR is 108.00 USD."

A turn is what the model answers at that point of the conversation (turn 1: the question; turn 2: after the
first tool result; ...). Turns past the last one answer like the last. Each file gives three variations:
`steady` (the same answer every time), `drifting` (the same decision in other words) and `changed` (from the
second ask of a turn on, that turn's `changed` answer).
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.stub._scripts import Answer, Script, ToolCall

__all__ = ["VARIATIONS", "FileScript", "ScriptFileError", "Turn", "load_script_file"]

VARIATIONS = ("steady", "drifting", "changed")


class ScriptFileError(UsageError):
    """A script file that cannot be read or does not say what each turn answers."""


@dataclass(frozen=True)
class Turn:
    """What the model answers at one turn of the conversation."""

    answer: Answer
    """The steady answer."""
    drift: tuple[str, ...] = ()
    """Other words for the same decision, one per call (variation `drifting`)."""
    changed: Answer | None = None
    """The answer from the second ask of this turn on (variation `changed`); None: never changes."""


@dataclass(frozen=True)
class FileScript(Script):
    """A script read from a file, in one of its variations."""

    turns: tuple[Turn, ...] = ()
    """The file's turns, in order."""
    variation: str = "steady"
    """steady, drifting or changed."""

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        spec = self.turns[min(turn, len(self.turns)) - 1]
        if self.variation == "changed" and ask >= 2 and spec.changed is not None:
            return spec.changed
        if self.variation == "drifting" and spec.drift:
            text = spec.drift[(call - 1) % len(spec.drift)]
            return dataclasses.replace(spec.answer, text=text)
        return spec.answer


def _answer(raw: Any, where: str) -> Answer:
    if not isinstance(raw, dict):
        raise ScriptFileError(f"{where}: expected a table with `text` and optionally `tool`/`arguments`")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ScriptFileError(f"{where}: `text` must be a string")
    usage = _usage(raw.get("usage", {}), where)
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    tool = raw.get("tool")
    if tool is None:
        return Answer(text=text, prompt_tokens=prompt, completion_tokens=completion)
    if not isinstance(tool, str):
        raise ScriptFileError(f"{where}: `tool` must be the tool's name")
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ScriptFileError(f"{where}: `arguments` must be a table")
    return Answer(
        text=text,
        tool_call=ToolCall(tool, json.dumps(arguments)),
        prompt_tokens=prompt,
        completion_tokens=completion,
    )


def _usage(raw: Any, where: str) -> dict[str, int]:
    """A turn's `usage` table: prompt_tokens and/or completion_tokens, each a non-negative integer."""
    if not isinstance(raw, dict):
        raise ScriptFileError(f"{where}: `usage` must be a table of prompt_tokens and completion_tokens")
    known = ("prompt_tokens", "completion_tokens")
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ScriptFileError(f"{where}: unknown `usage` key {unknown[0]!r} (known: {', '.join(known)})")
    for key, value in raw.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ScriptFileError(f"{where}: `usage.{key}` must be a non-negative integer")
    return {key: int(value) for key, value in raw.items()}


def load_script_file(path: Path, variation: str = "steady") -> FileScript:
    """Read a script file (TOML if it ends in .toml, JSON otherwise) in one variation."""
    if variation not in VARIATIONS:
        raise ScriptFileError(f"unknown variation {variation!r} (known: {', '.join(VARIATIONS)})")
    try:
        text = path.read_text()
    except OSError as err:
        raise ScriptFileError(f"cannot read script file {path}: {err.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as err:
        raise ScriptFileError(f"script file {path} does not parse: {err}") from None
    raw_turns = data.get("turn", data.get("turns")) if isinstance(data, dict) else data
    if not isinstance(raw_turns, list) or not raw_turns:
        raise ScriptFileError(f"script file {path}: expected a non-empty list of turns (`[[turn]]`)")
    turns = []
    for number, raw in enumerate(raw_turns, start=1):
        where = f"{path} turn {number}"
        answer = _answer(raw, where)
        drift = raw.get("drift", [])
        if not isinstance(drift, list) or not all(isinstance(d, str) for d in drift):
            raise ScriptFileError(f"{where}: `drift` must be a list of strings")
        changed = _answer(raw["changed"], where + " (changed)") if "changed" in raw else None
        turns.append(Turn(answer, tuple(drift), changed))
    return FileScript(
        name=variation,
        description=f"{path.name}, {variation}",
        turns=tuple(turns),
        variation=variation,
    )
