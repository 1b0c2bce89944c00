"""`--script auto`: answers made from the request itself, for an app nobody wrote a script for.

What a request offers decides what it gets, in each API the stub speaks (chat completions, Responses,
Anthropic Messages): on the first turn, a call to an offered tool (two when parallel calls are allowed),
its arguments made from the tool's JSON schema (`paidtwice.schema.value_for`) and the question's names and
numbers; a forced tool whenever asked; after the tools' results (`TOOL_TURNS`), the final answer, valid
against the structured output asked for. Run-ending tools (pydantic-ai's `final_result*`) come last, and a
handoff (`transfer_to_*`) is never called beside another tool.

Every choice is a pure function of the seed, the call and the variation, so a run can be replayed:
`steady` answers the same every time, `drifting` in other words on each ask, `changed` another tool or
answer from a call's second ask on. `AutoBook.write` turns the calls answered into a script file. A reach
script (`reach_script`, for `sweep --every-tool`) puts one tool first in every first turn that offers it.
The rules per API: docs/how-to/answers-without-a-script.md.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ScriptFileError, UnsatisfiableSchema
from paidtwice.schema import value_for
from paidtwice.stub._scripts import Answer, Asked, Script, ToolCall, conversation_turn
from paidtwice.stub._turns import load_script_file, prompts

__all__ = [
    "AUTO",
    "DEFAULT_SEED",
    "TOOL_TURNS",
    "AutoBook",
    "AutoScript",
    "Call",
    "Tool",
    "auto_script",
    "offered_tools",
    "reach_script",
    "script_for",
    "write_turns",
]

AUTO = "auto"
"""The `--script` that asks for answers made from each request."""

DEFAULT_SEED = 0
TOOL_TURNS = 1
"""Conversation turns that call tools before the final answer (unless the request forces a tool)."""

Call = tuple[int, str, str]
"""A call as a script file matches it: its conversation position, system prompt and last user message."""

_OUTPUT_TOOL = re.compile(r"^final_result")
_HANDOFF = re.compile(r"^transfer_to_")
_SAYING = (
    "Let me use {tool} for this.",
    "I'll call {tool} first.",
    "One moment: {tool}.",
    "Checking with {tool}.",
)
_FINAL = (
    "Here is what I found for {q}: everything checks out.",
    "For {q}, I looked it up: everything checks out.",
    "I checked {q} and everything is in order.",
    "Everything checks out for {q}.",
)
_CHANGED = "On second thought, about {q}: it is not what it seemed; please check again."


@dataclass(frozen=True)
class Tool:
    """A function tool a request offers."""

    name: str
    """Its name."""
    schema: Any
    """The JSON schema of its arguments."""


@dataclass(frozen=True)
class _Reading:
    """What a request asks for, read the same way from each API."""

    tools: tuple[Tool, ...]
    forced: str | None
    required: bool
    parallel: bool
    output: Any
    json_mode: bool


class AutoBook:
    """The calls an auto script answered (first ask of each), across its variations, for `write`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: dict[Call, Asked] = {}

    def note(self, key: Call, asked: Asked) -> None:
        with self._lock:
            self._asked.setdefault(key, asked)

    def calls(self) -> list[tuple[Call, Asked]]:
        with self._lock:
            return list(self._asked.items())


@dataclass(frozen=True)
class AutoScript(Script):
    """Answers from the request (see the module's docstring), in one variation, for one seed."""

    variation: str = "steady"
    """steady, drifting or changed."""
    seed: int = DEFAULT_SEED
    """What every choice is derived from; printed with the sweep, set with --seed."""
    book: AutoBook = field(default_factory=AutoBook, compare=False)
    """Where the calls answered are kept (shared by the variations of one sweep)."""

    def call_of(self, messages: Sequence[Any], turn: int) -> str:
        """Each call counts its own asks: told apart by its system prompt and last user message."""
        user, system = prompts(messages)
        return hashlib.blake2b(f"{turn}\0{system}\0{user}".encode(), digest_size=8).hexdigest()

    def respond(self, asked: Asked, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        user, system = prompts(asked.chat)
        position = conversation_turn(asked.chat)
        self.book.note((position, system, user), asked)
        return answer_to(asked, seed=self.seed, variation=self.variation, ask=ask)

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        return Answer(text="(auto answers need the request; see AutoScript.respond)")

    def write(self, path: Path) -> int:
        """Write the answers given, as a script file (TOML if `path` ends in .toml, else JSON), that answers
        each call the same (steady), in other words (drifting) and changed as this script did; the number
        of turns written."""
        turns = []
        for key, asked in self.book.calls():
            steady = answer_to(asked, seed=self.seed, variation="steady", ask=1)
            changed = answer_to(asked, seed=self.seed, variation="changed", ask=2)
            drift = [answer_to(asked, seed=self.seed, variation="drifting", ask=a).text for a in (1, 2, 3, 4)]
            turns.append((key, steady, tuple(drift) if len(set(drift)) > 1 else (), changed))
        return write_turns(path, turns, "Answers given by `--script auto`")


def write_turns(
    path: Path, answers: Sequence[tuple[Call, Answer, tuple[str, ...], Answer | None]], heading: str
) -> int:
    """Write a script file (TOML if `path` ends in .toml, else JSON) with a turn per call: matched by its
    exact last user message, system prompt and position; its steady answer, drift and changed answer."""
    turns = []
    for (position, system, user), steady, drift, changed in sorted(answers, key=lambda a: a[0]):
        turn: dict[str, Any] = {"when": f"^{_literal(user)}$"}
        if system:
            turn["when_system"] = f"^{_literal(system)}$"
        turn["position"] = position
        turn.update(_answer_table(steady))
        if drift:
            turn["drift"] = list(drift)
        if changed is not None and changed != steady:
            turn["changed"] = _answer_table(changed)
        turns.append(turn)
    if not turns:
        raise ScriptFileError(f"no model call was answered: nothing to write to {path}")
    if path.suffix == ".toml":
        text = _toml(turns, path, heading)
    else:
        text = json.dumps({"turn": turns}, indent=2) + "\n"
    try:
        path.write_text(text)
    except OSError as err:
        raise ScriptFileError(f"cannot write the script file {path}: {err.strerror}") from None
    return len(turns)


def _literal(text: str) -> str:
    """A regular expression matching `text` as written (spaces left readable: they are not special)."""
    return re.escape(text).replace("\\ ", " ")


def script_for(
    script: str | Path | None, variation: str, *, seed: int = DEFAULT_SEED, book: AutoBook | None = None
) -> Script:
    """The answers of a user's app: `auto` (or no script) answers from each request; a path is a script
    file, which wins over auto answers whenever it is given."""
    if script is None or str(script) == AUTO:
        return auto_script(variation, seed=seed, book=book)
    return load_script_file(Path(script), variation)


def auto_script(variation: str, *, seed: int = DEFAULT_SEED, book: AutoBook | None = None) -> AutoScript:
    """The auto script in one variation (all of a sweep's variations share `book`)."""
    return AutoScript(
        name=variation,
        description=f"auto answers from each request, {variation}, seed {seed}",
        variation=variation,
        seed=seed,
        book=book or AutoBook(),
    )


@dataclass(frozen=True)
class ReachScript(AutoScript):
    """Auto answers whose first turns call one tool first wherever it is offered (`sweep --every-tool`)."""

    first_tool: str = ""
    """The tool called first."""

    def respond(self, asked: Asked, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        # Not noted in the book: `write` keeps what the seed chose, not what was forced.
        return answer_to(asked, seed=self.seed, variation=self.variation, ask=ask, first=self.first_tool)


def reach_script(variation: str, tool: str, *, seed: int = DEFAULT_SEED) -> ReachScript:
    """The auto script in one variation, its first turns calling `tool` first wherever it is offered."""
    return ReachScript(
        name=f"{variation}+{tool}",
        description=f"auto answers from each request, {variation}, seed {seed}, calling {tool} first",
        variation=variation,
        seed=seed,
        first_tool=tool,
    )


def answer_to(asked: Asked, *, seed: int, variation: str, ask: int, first: str | None = None) -> Answer:
    """The auto answer to one request (see the module's docstring); `first`: a tool called first whenever
    a first turn offers it."""
    reading = read_request(asked)
    user, system = prompts(asked.chat)
    position = conversation_turn(asked.chat)
    changed = variation == "changed" and ask >= 2
    drift = (ask - 1) if variation == "drifting" else 0
    base = f"{seed}\0{position}\0{system}\0{user}"
    rng = random.Random(hashlib.sha256(base.encode()).digest())
    question = _question(user)
    by_name = {t.name: t for t in reading.tools}
    if reading.forced is not None and reading.forced in by_name:
        return _calls([by_name[reading.forced]], base, changed, drift, "", user)
    ordinary = [t for t in reading.tools if not _OUTPUT_TOOL.match(t.name)]
    if ordinary and position <= TOOL_TURNS:
        order = list(ordinary)
        rng.shuffle(order)
        order.sort(key=lambda t: t.name != first)  # stable: the seed's order otherwise
        if changed and len(order) > 1:
            order = order[1:] + order[:1]
        chosen = [order[0]]
        if reading.parallel and not _HANDOFF.match(order[0].name):
            chosen += [t for t in order[1:] if not _HANDOFF.match(t.name)][:1]
        return _calls(chosen, base, changed, drift, _SAYING[drift % len(_SAYING)], user)
    if reading.tools and reading.required:
        ending = [t for t in reading.tools if _OUTPUT_TOOL.match(t.name)] or list(reading.tools)
        return _calls(ending[:1], base, changed, drift, "")
    if reading.output is not None:
        try:
            made = value_for(reading.output, seed=f"{base}\0output" + ("\0changed" if changed else ""))
        except UnsatisfiableSchema as err:
            return Answer(text=f"paidtwice cannot answer in the requested schema: {err}", status=400)
        return Answer(text=json.dumps(made))
    text = (_CHANGED if changed else _FINAL[drift % len(_FINAL)]).format(q=question)
    return Answer(text=json.dumps({"answer": text}) if reading.json_mode else text)


def _calls(
    tools: Sequence[Tool], base: str, changed: bool, drift: int, saying: str, user: str = ""
) -> Answer:
    calls = []
    strings, numbers = ([], []) if changed else _mentioned(user)
    for tool in tools:
        salt = f"{base}\0{tool.name}" + ("\0changed" if changed else "")
        try:
            arguments = value_for(tool.schema, seed=salt, strings=strings, numbers=numbers)
        except UnsatisfiableSchema as err:
            return Answer(text=f"paidtwice cannot make arguments for tool {tool.name}: {err}", status=400)
        calls.append(ToolCall(tool.name, json.dumps(arguments)))
    text = saying.format(tool=" and ".join(t.name for t in tools)) if saying else ""
    return Answer(text=text, tool_call=calls[0], more_tool_calls=tuple(calls[1:]))


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\w)")
_NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:[ -][A-Z][A-Za-z]+)*\b")


def _mentioned(user: str) -> tuple[list[str], list[float]]:
    """What a model would fill free arguments with: the names (capitalised words, codes such as EUR; not a
    sentence's first word) and the numbers of the question, in order."""
    names = []
    for sentence in re.split(r"(?<=[.?!])\s+", user):
        names += [m.group() for m in _NAME.finditer(sentence) if m.start() > 0]
    numbers = [float(m.group()) for m in _NUMBER.finditer(user)]
    return names, numbers


def _question(user: str) -> str:
    flat = " ".join(user.split())
    if not flat:
        return "your request"
    return json.dumps(flat if len(flat) <= 60 else flat[:57] + "...")


def read_request(asked: Asked) -> _Reading:
    """The tools, tool choice, parallelism and output format a request asks for."""
    request = asked.request if isinstance(asked.request, Mapping) else {}
    if asked.api == "messages":
        return _read_messages(request)
    if asked.api == "gemini":
        return _read_gemini(request)
    tools: list[Tool] = []
    for raw in request.get("tools") or []:
        if not isinstance(raw, Mapping) or raw.get("type", "function") != "function":
            continue
        spec = raw.get("function", raw) if asked.api == "chat" else raw
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            tools.append(Tool(spec["name"], spec.get("parameters") or {"type": "object"}))
    for spec in request.get("functions") or []:  # the chat API's older spelling
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            tools.append(Tool(spec["name"], spec.get("parameters") or {"type": "object"}))
    choice = request.get("tool_choice", request.get("function_call"))
    forced = None
    if isinstance(choice, Mapping):
        inner = choice.get("function", choice)
        forced = inner.get("name") if isinstance(inner, Mapping) else None
    if choice == "none":
        tools = []
    output, json_mode = None, False
    if asked.api == "chat":
        fmt = request.get("response_format")
    else:
        text = request.get("text")
        fmt = text.get("format") if isinstance(text, Mapping) else None
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema", fmt) if asked.api == "chat" else fmt
            output = spec.get("schema", {}) if isinstance(spec, Mapping) else {}
        json_mode = fmt.get("type") == "json_object"
    return _Reading(
        tools=tuple(tools),
        forced=forced if isinstance(forced, str) else None,
        required=choice == "required",
        parallel=request.get("parallel_tool_calls", True) is not False,
        output=output,
        json_mode=json_mode,
    )


def offered_tools(asked: Asked) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The function tools a request offers (what a stub's answer can call), and its hosted tools: those the
    provider runs itself (OpenAI's `web_search`, `file_search`; Anthropic's server tools; Gemini's
    `googleSearch`), which no stub answer can call, by name or type."""
    request = asked.request if isinstance(asked.request, Mapping) else {}
    try:
        offered = tuple(t.name for t in read_request(asked).tools)
    except (AttributeError, TypeError):  # a request the stub reads no tools from
        offered = ()
    hosted: list[str] = []
    for raw in request.get("tools") or []:
        if not isinstance(raw, Mapping):
            continue
        if asked.api == "gemini":
            hosted += [str(k) for k in raw if k not in ("functionDeclarations", "function_declarations")]
        elif asked.api == "messages":
            if raw.get("type") not in (None, "custom"):
                hosted.append(str(raw.get("name") or raw.get("type")))
        elif raw.get("type", "function") != "function":
            hosted.append(str(raw.get("type")))
    return offered, tuple(dict.fromkeys(hosted))


def _read_messages(request: Mapping[str, Any]) -> _Reading:
    tools = tuple(
        Tool(raw["name"], raw.get("input_schema") or {"type": "object"})
        for raw in request.get("tools") or []
        if isinstance(raw, Mapping)
        and isinstance(raw.get("name"), str)
        and raw.get("type") in (None, "custom")  # server tools (web search, ...) are the provider's
    )
    choice = request.get("tool_choice")
    choice = choice if isinstance(choice, Mapping) else {}
    kind = choice.get("type", "auto")
    output = None
    for holder in (request, request.get("output_config")):
        fmt = holder.get("output_format", holder.get("format")) if isinstance(holder, Mapping) else None
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            output = fmt.get("schema", {})
    return _Reading(
        tools=() if kind == "none" else tools,
        forced=choice.get("name") if kind == "tool" else None,
        required=kind == "any",
        parallel=choice.get("disable_parallel_tool_use") is not True,
        output=output,
        json_mode=False,
    )


def _read_gemini(request: Mapping[str, Any]) -> _Reading:
    """Gemini's `tools[].functionDeclarations`, `toolConfig.functionCallingConfig` and
    `generationConfig.responseSchema`/`responseJsonSchema` (camelCase or snake_case, as clients send)."""

    def get(holder: Any, name: str) -> Any:
        if not isinstance(holder, Mapping):
            return None
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        return holder.get(name, holder.get(snake))

    tools = []
    for group in get(request, "tools") or []:
        for spec in get(group, "functionDeclarations") or []:
            if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
                schema = get(spec, "parametersJsonSchema") or get(spec, "parameters") or {"type": "object"}
                tools.append(Tool(spec["name"], _gemini_schema(schema)))
    calling = get(get(request, "toolConfig"), "functionCallingConfig")
    mode = str(get(calling, "mode") or "AUTO").upper()
    allowed = get(calling, "allowedFunctionNames") or []
    generation = get(request, "generationConfig")
    output = get(generation, "responseJsonSchema") or get(generation, "responseSchema")
    return _Reading(
        tools=() if mode == "NONE" else tuple(tools),
        forced=allowed[0] if mode == "ANY" and len(allowed) == 1 else None,
        required=mode == "ANY",
        parallel=True,
        output=_gemini_schema(output) if output is not None else None,
        json_mode=get(generation, "responseMimeType") == "application/json",
    )


def _gemini_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-style schema (types in capitals: "OBJECT", "STRING") as JSON Schema."""
    if isinstance(schema, list):
        return [_gemini_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    made = {k: _gemini_schema(v) for k, v in schema.items()}
    if isinstance(made.get("type"), str):
        made["type"] = made["type"].lower()
    if "properties" in made and isinstance(schema.get("properties"), Mapping):
        made["properties"] = {k: _gemini_schema(v) for k, v in schema["properties"].items()}
    return made


def _answer_table(answer: Answer) -> dict[str, Any]:
    table: dict[str, Any] = {"text": answer.text}
    if answer.tool_call is not None:
        table["tool"] = answer.tool_call.name
        table["arguments"] = json.loads(answer.tool_call.arguments)
        if answer.more_tool_calls:
            table["parallel"] = [
                {"tool": t.name, "arguments": json.loads(t.arguments)} for t in answer.more_tool_calls
            ]
    return table


def _toml(turns: list[dict[str, Any]], path: Path, heading: str) -> str:
    lines = [f"# {heading}; edit and pass with --script."]
    for turn in turns:
        lines.append("")
        lines.append("[[turn]]")
        for key, value in turn.items():
            lines.append(f"{key} = {_toml_value(value, path)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any, path: Path) -> str:
    if value is None:
        raise ScriptFileError(f"{path}: an answer holds null, which TOML cannot say; write a .json file")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v, path) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v, path)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise ScriptFileError(f"{path}: cannot write {value!r} in TOML")
