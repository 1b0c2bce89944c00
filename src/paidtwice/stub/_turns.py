"""Script files: a user's own model answers, call by call, in JSON or TOML.

    [[turn]]
    when = "select the most appropriate support team"   # answers the calls whose last user message matches
    text = "<selection>billing</selection>"

    [[turn]]                                            # no `when`: the conversation's first turn
    text = "I'll convert that first."
    tool = "convert"
    arguments = { amount = 100, source = "EUR", target = "USD" }

A turn with `when`/`when_system` answers every call it matches (with `position`, only that turn of the
conversation); the others answer by position. Each file gives three variations (`steady`, `drifting`,
`changed`), counted per call. The whole format, errors and state included: docs/reference/script-format.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ScriptFileError
from paidtwice.stub._scripts import Answer, Script, ToolCall, UnansweredCall, conversation_turn

__all__ = [
    "VARIATIONS",
    "FileScript",
    "ScriptFileError",
    "Turn",
    "load_script_file",
    "prompts",
    "state_entries",
]

VARIATIONS = ("steady", "drifting", "changed")

_ANSWER_KEYS = ("text", "tool", "arguments", "usage", "parallel")
_TURN_KEYS = (*_ANSWER_KEYS, "drift", "changed", "errors", "when", "when_system", "position")
_ERROR_KEYS = ("status", "retry_after", "timeout", "message")
_TIMEOUT_STATUS = 504
"""What a `timeout` error answers once its time is up, to a client that waited that long."""


@dataclass(frozen=True)
class Turn:
    """What the model answers to the calls one `[[turn]]` of the file answers."""

    answer: Answer
    """The steady answer."""
    drift: tuple[str, ...] = ()
    """Other words for the same decision, one per ask of this turn, in turn (variation `drifting`)."""
    changed: Answer | None = None
    """The answer from the second ask of this turn on (variation `changed`); None: never changes."""
    errors: tuple[Answer, ...] = ()
    """HTTP errors the first asks of this turn get, one per ask, in order, before its answers (a 429, a 500,
    a timeout): the agent's error path (its client's retries, the handler's) is swept. The asks after them
    count from 1 again for `drift` and `changed`."""
    when: str | None = None
    """Regular expression searched in the last user message; None: not matched on it."""
    when_system: str | None = None
    """Regular expression searched in the system prompt; None: not matched on it."""
    position: int | None = None
    """With a pattern: the conversation's turn it answers (1: the first ask); None: any."""
    line: int = 0
    """Line of the file where the turn is (its `when`, or its `[[turn]]` header); 0 if unknown."""

    @property
    def positional(self) -> bool:
        """Answers by the conversation's position (no `when`, no `when_system`)."""
        return self.when is None and self.when_system is None

    def matches(self, user: str, system: str, position: int) -> bool:
        """Does this turn's pattern match a call with this last user message, system prompt and position?"""
        if self.positional or (self.position is not None and self.position != position):
            return False
        return (self.when is None or re.search(self.when, user) is not None) and (
            self.when_system is None or re.search(self.when_system, system) is not None
        )


def _text_of(message: dict[str, Any]) -> str:
    """A message's text: its content, or the text parts of a content list."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def prompts(messages: Sequence[Any]) -> tuple[str, str]:
    """The last user message and the system prompt (system or developer messages) of a request."""
    dicts = [m for m in messages if isinstance(m, dict)]
    users = [_text_of(m) for m in dicts if m.get("role") == "user"]
    system = "\n".join(_text_of(m) for m in dicts if m.get("role") in ("system", "developer"))
    return (users[-1] if users else ""), system


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


@dataclass(frozen=True)
class FileScript(Script):
    """A script read from a file, in one of its variations."""

    turns: tuple[Turn, ...] = ()
    """The file's turns, in order."""
    variation: str = "steady"
    """steady, drifting or changed."""
    path: str = ""
    """The file it was read from, as given."""

    def turn_of(self, messages: Sequence[Any]) -> int:
        """The number (1-based, in file order) of the turn that answers a request with these messages."""
        user, system = prompts(messages)
        position = conversation_turn(messages)
        matched = [n for n, t in enumerate(self.turns, start=1) if t.matches(user, system, position)]
        what = f"last user message {_excerpt(user)}"
        if system:
            what += f", system prompt {_excerpt(system)}"
        if len(matched) > 1:
            first, second = (self.turns[n - 1] for n in matched[:2])
            raise UnansweredCall(
                f"{self.path}:{second.line}: turns {matched[0]} (line {first.line}) and {matched[1]} "
                f"(line {second.line}) of the script both answer this call: {what}"
            )
        if matched:
            return matched[0]
        positional = [n for n, t in enumerate(self.turns, start=1) if t.positional]
        if positional and (position <= len(positional) or len(positional) == len(self.turns)):
            # A script of positional turns only answers past its end like its last turn, as it always has.
            return positional[min(position, len(positional)) - 1]
        raise UnansweredCall(
            f"no turn of the script answers this call: {what}, conversation turn {position} ({self.path})"
        )

    def call_of(self, messages: Sequence[Any], turn: int) -> str:
        """A matched turn may answer many calls (one `when` for every worker of an orchestrator): each is
        told apart by what it asks (its last user message and system prompt) and its position, so that a
        worker asked for the first time is not counted as another worker asked again."""
        if not 1 <= turn <= len(self.turns) or self.turns[turn - 1].positional:
            return ""
        user, system = prompts(messages)
        asked = f"{conversation_turn(messages)}\0{system}\0{user}"
        return hashlib.blake2b(asked.encode(), digest_size=8).hexdigest()

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        spec = self.turns[turn - 1]
        if ask <= len(spec.errors):
            return spec.errors[ask - 1]
        ask -= len(spec.errors)
        if self.variation == "changed" and ask >= 2 and spec.changed is not None:
            return spec.changed
        if self.variation == "drifting" and spec.drift:
            # Per ask of this turn, not per call of the invocation: each time a call is asked again, it is
            # answered in other words, whatever other calls came in between.
            text = spec.drift[(ask - 1) % len(spec.drift)]
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
    parallel = raw.get("parallel", [])
    if not isinstance(parallel, list):
        raise ScriptFileError(f"{where}: `parallel` must be a list of tables with `tool` and `arguments`")
    more = []
    for other in parallel:
        _known_keys(other, ("tool", "arguments"), where + " (parallel)")
        if not isinstance(other, dict) or not isinstance(other.get("tool"), str):
            raise ScriptFileError(f"{where}: each of `parallel` needs `tool`, the tool's name")
        if not isinstance(other.get("arguments", {}), dict):
            raise ScriptFileError(f"{where}: `arguments` in `parallel` must be a table")
        more.append(ToolCall(other["tool"], json.dumps(other.get("arguments", {}))))
    return Answer(
        text=text,
        tool_call=ToolCall(tool, json.dumps(arguments)),
        prompt_tokens=prompt,
        completion_tokens=completion,
        more_tool_calls=tuple(more),
    )


def _errors(raw: Any, where: str) -> tuple[Answer, ...]:
    """A turn's `errors`: per ask, `{ status = 429, retry_after = 2 }`, `{ status = 500 }` or
    `{ timeout = 30 }` (no answer for that many seconds, then a 504), each with an optional `message`."""
    if not isinstance(raw, list) or not raw:
        raise ScriptFileError(f"{where}: `errors` must be a non-empty list, e.g. [{{ status = 429 }}]")
    errors = []
    for number, item in enumerate(raw, start=1):
        at = f"{where} (errors[{number}])"
        if not isinstance(item, dict):
            raise ScriptFileError(f"{at}: expected a table with `status` or `timeout`")
        _known_keys(item, _ERROR_KEYS, at)
        message = item.get("message")
        if message is not None and not isinstance(message, str):
            raise ScriptFileError(f"{at}: `message` must be a string")
        timeout = item.get("timeout")
        if timeout is not None:
            if "status" in item or "retry_after" in item:
                raise ScriptFileError(
                    f"{at}: a `timeout` answers nothing in time: no `status` or `retry_after`"
                )
            if not _seconds(timeout) or timeout <= 0:
                raise ScriptFileError(f"{at}: `timeout` must be a number of seconds above 0")
            text = message or f"the model did not answer within {timeout:g}s"
            errors.append(Answer(text=text, status=_TIMEOUT_STATUS, delay=float(timeout)))
            continue
        status = item.get("status")
        if type(status) is not int or not 400 <= status <= 599:
            raise ScriptFileError(f"{at}: `status` must be an HTTP error status, 400 to 599 (or a `timeout`)")
        retry_after = item.get("retry_after")
        if retry_after is not None and (not _seconds(retry_after) or retry_after < 0):
            raise ScriptFileError(f"{at}: `retry_after` must be a number of seconds, 0 or more")
        text = message or f"paidtwice stub: scripted HTTP {status}"
        after = None if retry_after is None else float(retry_after)
        errors.append(Answer(text=text, status=status, retry_after=after))
    return tuple(errors)


def _seconds(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def state_entries(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A state given as a table (`[state]`, `--state JSON`): each entry's name and its value as JSON, the
    bytes the SDK's default serde reads back."""
    if not isinstance(raw, dict):
        example = '{"history": []}'
        raise ScriptFileError(f"{where}: the state must be a table of names and values, e.g. {example}")
    return tuple((str(name), json.dumps(value)) for name, value in raw.items())


def _known_keys(raw: Any, known: Sequence[str], where: str) -> None:
    unknown = sorted(set(raw) - set(known)) if isinstance(raw, dict) else []
    if unknown:
        raise ScriptFileError(f"{where}: unknown key `{unknown[0]}` (known: {', '.join(known)})")


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


def _turn_lines(text: str, toml: bool) -> list[tuple[int, int | None]]:
    """Per turn, in order, the line of its header and of its `when` key (None if it has none).

    The parsers keep no line numbers, so they are found in the text: a TOML turn starts at a `[[turn]]`
    header, a JSON turn at its `{`; its `when`/`when_system` is the first such key before the next turn."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[\s*turns?\s*\]\]") if toml else re.compile(r"^\s*\{")
    key = re.compile(r'^\s*"?when(_system)?"?\s*[=:]') if toml else re.compile(r'"when(_system)?"\s*:')
    found: list[tuple[int, int | None]] = []
    for number, line in enumerate(lines, start=1):
        if header.search(line):
            found.append((number, None))
        if key.search(line) and found and found[-1][1] is None:
            found[-1] = (found[-1][0], number)
    return found


def _pattern(raw: dict[str, Any], name: str, where: str) -> str | None:
    pattern = raw.get(name)
    if pattern is None:
        return None
    if not isinstance(pattern, str) or not pattern:
        raise ScriptFileError(f"{where}: `{name}` must be a non-empty regular expression")
    try:
        re.compile(pattern)
    except re.error as err:
        raise ScriptFileError(f"{where}: `{name}` is not a valid regular expression: {err}") from None
    return pattern


def _awakeables(raw: Any, path: Path) -> tuple[str, ...]:
    """The `[[awakeable]]` tables' values, as JSON: what a person answers each awakeable or promise with."""
    if not isinstance(raw, list) or not all(isinstance(t, dict) and set(t) == {"value"} for t in raw):
        raise ScriptFileError(
            f"script file {path}: each [[awakeable]] is a table with one key, `value` (e.g. value = true)"
        )
    return tuple(json.dumps(t["value"]) for t in raw)


def load_script_file(path: Path, variation: str = "steady") -> FileScript:
    """Read a script file (TOML if it ends in .toml, JSON otherwise) in one variation."""
    if variation not in VARIATIONS:
        raise ScriptFileError(f"unknown variation {variation!r} (known: {', '.join(VARIATIONS)})")
    try:
        text = path.read_text()
    except OSError as err:
        raise ScriptFileError(f"cannot read script file {path}: {err.strerror}") from None
    toml = path.suffix == ".toml"
    try:
        data = tomllib.loads(text) if toml else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as err:
        raise ScriptFileError(f"script file {path} does not parse: {err}") from None
    raw_turns = data.get("turn", data.get("turns")) if isinstance(data, dict) else data
    state = state_entries(data.get("state", {}) if isinstance(data, dict) else {}, f"script file {path}")
    awakeables = _awakeables(data.get("awakeable", []) if isinstance(data, dict) else [], path)
    if not isinstance(raw_turns, list) or not raw_turns:
        raise ScriptFileError(f"script file {path}: expected a non-empty list of turns (`[[turn]]`)")
    # JSON: the turns' objects are the `{` lines after the list opens (one turn per object, as written).
    lines = _turn_lines(text, toml)
    if not toml:
        lines = lines[1:] if isinstance(data, dict) else lines
    turns: list[Turn] = []
    seen: dict[tuple[str | None, str | None, int | None], Turn] = {}
    for number, raw in enumerate(raw_turns, start=1):
        header, when_line = lines[number - 1] if number <= len(lines) else (0, None)
        line = when_line or header
        where = f"{path}:{line}: turn {number}" if line else f"{path} turn {number}"
        # A misspelt key would be ignored: `wehn` would make the turn positional, `change` a turn that
        # never changes its mind, and the sweep would measure another script than the one meant.
        _known_keys(raw, _TURN_KEYS, where)
        if isinstance(raw, dict) and isinstance(raw.get("changed"), dict):
            _known_keys(raw["changed"], _ANSWER_KEYS, where + " (changed)")
        answer = _answer(raw, where)
        drift = raw.get("drift", [])
        if not isinstance(drift, list) or not all(isinstance(d, str) for d in drift):
            raise ScriptFileError(f"{where}: `drift` must be a list of strings")
        changed = _answer(raw["changed"], where + " (changed)") if "changed" in raw else None
        errors = _errors(raw["errors"], where) if "errors" in raw else ()
        position = raw.get("position")
        if position is not None and (type(position) is not int or position < 1):
            raise ScriptFileError(f"{where}: `position` must be a conversation turn: 1, 2, ...")
        turn = Turn(
            answer,
            tuple(drift),
            changed,
            errors=errors,
            when=_pattern(raw, "when", where),
            when_system=_pattern(raw, "when_system", where),
            position=position,
            line=line,
        )
        if turn.positional and position is not None:
            raise ScriptFileError(f"{where}: `position` goes with `when` or `when_system`")
        if not turn.positional:
            key = (turn.when, turn.when_system, turn.position)
            same = seen.get(key)
            if same is not None:
                raise ScriptFileError(
                    f"{where}: matches the same calls as the turn at line {same.line} (the same `when`)"
                )
            seen[key] = turn
        turns.append(turn)
    return FileScript(
        name=variation,
        description=f"{path.name}, {variation}",
        turns=tuple(turns),
        variation=variation,
        path=str(path),
        state=state,
        awakeables=awakeables,
    )
