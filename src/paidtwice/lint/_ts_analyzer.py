"""Lint TypeScript files: find their Restate handlers and walk each (`_ts_walker`), giving the same findings,
codes and messages as for Python.

A handler is a function given to `restate.service`, `restate.object` or `restate.workflow` under
`handlers: {...}`: inline (`run: async (ctx, input) => ...`, `async run(ctx, input) {...}`), by name (`run`,
`run: agentLoop`, imported from a file beside it), or wrapped (`restate.createServiceHandler({...}, run)`,
`restate.handlers.object.shared({...}, run)`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from paidtwice.lint._findings import Finding, noqa
from paidtwice.lint._rules import CODES, PARSE_ERROR
from paidtwice.lint._ts_index import (
    FUNCTION_TYPES,
    Node,
    TsModule,
    TsProject,
    arguments,
    parameters,
    parse_error,
    parse_module,
    property_value,
    text,
)
from paidtwice.lint._ts_rules import SERVICE_MAKERS
from paidtwice.lint._ts_walker import CONTEXT, TsSummaries, TsWalker, line

__all__ = ["TsLint"]

PAUSE_OPTION = "onJournalMismatchErrors"
_PAUSE_HINT = (
    '; and consider `onJournalMismatchErrors: "pause"` in the service\'s options (@restatedev/restate-sdk '
    "1.17, experimental; restate-server 1.7 honours it with RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7=true): "
    "a replay that takes another path then pauses at the first mismatch instead of retrying, and paying again"
)


@dataclass(frozen=True)
class _Handler:
    services: tuple[str, ...]
    """The service's names (one, or each a factory function makes it under; `_service_names`)."""
    name: str
    """The handler's key."""
    function: Node
    """Its function."""
    module: TsModule
    """The module the function is in."""
    pauses: bool
    """Its service or handler sets onJournalMismatchErrors."""

    @property
    def label(self) -> str:
        """ "handler Billing/reply", "handlers Billing/reply and Security/reply"."""
        named = [f"{service}/{self.name}" for service in self.services]
        if len(named) == 1:
            return f"handler {named[0]}"
        return f"handlers {', '.join(named[:-1])} and {named[-1]}"


class TsLint:
    """One run over TypeScript files: parsed once, helpers followed across their relative imports."""

    def __init__(self, selected: frozenset[str]) -> None:
        self.selected = selected
        self.project = TsProject()
        self.summaries = TsSummaries(self.project, selected)
        self.handlers = 0
        self.undecided: list[tuple[str, int, str]] = []

    def lint(self, path: Path, source: bytes) -> list[Finding]:
        module = parse_module(path, source)
        error = parse_error(module.root)
        if error is not None:
            near = text(error)[:40].splitlines()[0] if text(error) else "here"
            return [
                Finding(
                    str(path),
                    line(error),
                    error.start_point[1] + 1,
                    PARSE_ERROR,
                    f"{CODES[PARSE_ERROR].kind}: TypeScript syntax error near {near!r}; the file was not "
                    "checked",
                )
            ]
        self.project.add(module)
        if b"restate" not in source:
            return []
        findings: dict[tuple[int, str], Finding] = {}
        for handler in _handlers(self.project, module):
            self.handlers += len(handler.services)
            walker = TsWalker(self.summaries, handler.module, handler.function, _context(handler.function))
            walker.walk_body()
            for why, node in walker.undecided:
                entry = (str(path), line(node), f"cannot decide whether {why}")
                if entry not in self.undecided:
                    self.undecided.append(entry)
            where = path if handler.module is module else handler.module.path
            lines = handler.module.lines
            for effect in walker.found:
                at = line(effect.node)
                if (at, effect.code) in findings or effect.code not in self.selected:
                    continue
                if noqa(lines[at - 1] if 0 < at <= len(lines) else "", effect.code):
                    continue
                via = f" (through {', '.join(effect.via)})" if effect.via else ""
                hint = _PAUSE_HINT if effect.model and not handler.pauses else ""
                findings[(at, effect.code)] = Finding(
                    str(where),
                    at,
                    effect.node.start_point[1] + 1,
                    effect.code,
                    f"{CODES[effect.code].kind}: {effect.what} in {handler.label}{via}{hint}",
                )
        return list(findings.values())


def _context(function: Node) -> dict[str, str]:
    params = parameters(function)
    if params and params[0].type == "identifier":
        return {text(params[0]): CONTEXT}
    return {}


def _handlers(project: TsProject, module: TsModule) -> Iterator[_Handler]:
    """Every handler the module's services register (handlers in the module or imported from beside it)."""
    stack = [module.root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type != "call_expression":
            continue
        callee = node.child_by_field_name("function")
        if callee is None or module.qualify(callee) not in SERVICE_MAKERS:
            continue
        args = arguments(node)
        definition = args[0] if args else None
        handlers = property_value(definition, "handlers")
        if handlers is None or handlers.type != "object":
            continue
        name_node = property_value(definition, "name")
        services = _service_names(module, node, name_node)
        service_pauses = PAUSE_OPTION in text(property_value(definition, "options"))
        for entry in handlers.named_children:
            value: Node | None
            if entry.type == "method_definition":
                key, value = text(entry.child_by_field_name("name")), entry
            elif entry.type == "pair":
                key = text(entry.child_by_field_name("key")).strip("\"'")
                value = entry.child_by_field_name("value")
            elif entry.type == "shorthand_property_identifier":
                key, value = text(entry), entry
            else:
                continue
            pauses = service_pauses
            if value is not None and value.type == "call_expression":
                # restate.createServiceHandler({...}, run), or another wrapper: its last argument.
                wrapped = arguments(value)
                pauses = pauses or (bool(wrapped) and PAUSE_OPTION in text(wrapped[0]))
                value = wrapped[-1] if wrapped else None
            found = _function(project, module, value)
            if found is not None:
                yield _Handler(services, key, found[1], found[0], pauses)


def _function(project: TsProject, module: TsModule, value: Node | None) -> tuple[TsModule, Node] | None:
    if value is None:
        return None
    if value.type in FUNCTION_TYPES:
        return module, value
    if value.type not in ("identifier", "shorthand_property_identifier"):
        return None
    name = text(value)
    if name in module.functions:
        return module, module.functions[name]
    if name in module.imports:
        resolved = project.resolve(module, module.imports[name])
        if resolved is not None and resolved[1] in resolved[0].functions:
            return resolved[0], resolved[0].functions[resolved[1]]
    return None


_NAMES = ("identifier", "shorthand_property_identifier")
"""A name as an expression: `x`, or `{ x }` in an object literal."""


def _service_names(module: TsModule, call: Node, name: Node | None) -> tuple[str, ...]:
    """The service's names, as Restate's TypeScript code gives them: a literal, a module constant holding
    one, or a parameter of the function that makes the service (a factory: `specialist("Billing")`), each
    literal the module calls it with; else the name of the constant the service is assigned to, or "?"."""
    named = name is not None and name.type in _NAMES
    passed = _passed(module, text(name), call) if named else None
    if passed:
        return passed
    found = _literal(module, name) if passed is None else None  # a parameter's name shadows a constant's
    if found is not None:
        return (found,)
    parent = call.parent
    target = parent.child_by_field_name("name") if parent is not None else None
    if parent is not None and parent.type == "variable_declarator" and target is not None:
        return (text(target),)
    return ("?",)


def _literal(module: TsModule, node: Node | None) -> str | None:
    """The string an expression is: a literal (`"a"`, `` `a` ``, `"a" as const`), or a module constant
    holding one."""
    while node is not None and node.type in (
        "as_expression",
        "satisfies_expression",
        "parenthesized_expression",
    ):
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return None
    if node.type == "string" or (
        node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children)
    ):
        return text(node)[1:-1]
    if node.type in _NAMES and text(node) in module.constants:
        constant = module.constants[text(node)]
        # One step: a constant that names another constant may name itself.
        return _literal(module, constant) if constant.type not in _NAMES else None
    return None


def _passed(module: TsModule, name: str, inside: Node) -> tuple[str, ...] | None:
    """For `name`, a parameter of a function around `inside` (None for any other name): the literal each
    call of that function in the module passes it, in order."""
    function = inside.parent
    while function is not None and function.type not in FUNCTION_TYPES:
        function = function.parent
    if function is None:
        return None
    params = [text(p) if p.type == "identifier" else "" for p in parameters(function)]
    if name not in params:
        return _passed(module, name, function)  # a parameter of a function further out, or a module name
    at = params.index(name)
    maker = function.child_by_field_name("name")
    if maker is None and function.parent is not None and function.parent.type == "variable_declarator":
        maker = function.parent.child_by_field_name("name")
    found: list[str] = []
    stack = [module.root]
    while stack and maker is not None:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        callee = node.child_by_field_name("function") if node.type == "call_expression" else None
        if callee is None or callee.type != "identifier" or text(callee) != text(maker):
            continue
        args = arguments(node)
        value = _literal(module, args[at]) if at < len(args) else None
        if value is not None and value not in found:
            found.append(value)
    return tuple(found)
