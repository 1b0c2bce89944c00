"""Walk a TypeScript Restate handler as it executes, for the calls a replay makes (and pays for) again.

The same judgement as for Python (`_walker`): a handler runs again from its first line on every attempt, so
what it does outside the action of `ctx.run(name, action)` is done again. Closures passed to other calls are
walked in place (an array's `map`, an AI SDK tool's `execute` run now); functions bound to a name are walked
where they are called, with what the caller passes them (the handler's context, a model wrapped with
Restate's `durableCalls`). A finding is placed on the line of the call in the handler's file: the model call
itself when the handler or a helper of the same file makes it, the call of an imported helper otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from paidtwice.lint._ts_index import (
    FUNCTION_TYPES,
    Node,
    TsModule,
    TsProject,
    arguments,
    call_name,
    function_body,
    parameter_types,
    parameters,
    property_value,
    text,
)
from paidtwice.lint._ts_rules import (
    AI_MODEL_CALLS,
    CLIENT,
    DURABLE_CALLS,
    DURABLE_MODEL,
    MODEL_CLIENTS,
    NEW_CODES,
    PLAIN_MODEL,
    PROVIDER,
    WRAP_MODEL,
    match_ts_call,
    model_method,
    provider_model,
)
from paidtwice.lint._ts_writes import writes_without_key

__all__ = ["CONTEXT", "TsEffect", "TsWalker"]

CONTEXT = "context"
"""What lint calls the handler's Restate context (its first parameter, and wherever it is passed)."""
_MODEL_HOSTS = (
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "openrouter.ai",
    "/chat/completions",
    "/responses",
    "/v1/messages",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
)
"""Text in a fetch's URL that says it calls a model API."""
_SKIPPED = {"function_declaration", "generator_function_declaration", "class_declaration", "class"}
_DEPTH = 12


@dataclass(frozen=True)
class TsEffect:
    """One call a replay makes again, as found in one function."""

    code: str
    """Rule code."""
    what: str
    """The call, in a few words ("generateText() with a model outside durableCalls")."""
    node: Node
    """Where, in the module of the function walked."""
    model: bool = False
    """It calls a model (not any network call): the finding then suggests pausing on a journal mismatch."""
    via: tuple[str, ...] = ()
    """The helpers of the same module it was reached through, outermost first ("chat() at line 62")."""


def line(node: Node) -> int:
    return node.start_point[0] + 1


class TsWalker:
    """Walks one function body: not into functions bound to a name (walked where called), not into the
    actions of `ctx.run`."""

    def __init__(
        self,
        project: TsSummaries,
        module: TsModule,
        function: Node,
        kinds: dict[str, str],
        depth: int = 0,
    ) -> None:
        self.project = project
        self.module = module
        self.function = function
        self.kinds = dict(kinds)
        """Names bound to something lint tracks: the context, a client, a model (plain or durable)."""
        self.depth = depth
        self.local: set[str] = set()
        """Names bound in the function: they shadow globals and imports."""
        self.local_functions: dict[str, Node] = {}
        self.found: list[TsEffect] = []
        self.undecided: list[tuple[str, Node]] = []
        """Calls lint cannot judge, and why: reported as such, never as findings."""
        for pattern in parameters(function):
            self.local |= _bound_names(pattern)

    def walk_body(self) -> None:
        body = function_body(self.function)
        if body is None:
            return
        for node in _own_nodes(body):
            if node.type == "function_declaration":
                name = text(node.child_by_field_name("name"))
                self.local_functions[name] = node
                self.local.add(name)
            elif node.type == "variable_declarator":
                name_node = node.child_by_field_name("name")
                if name_node is not None:
                    self.local |= _bound_names(name_node)
        self.visit(body)

    # -- structure

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind in _SKIPPED:
            return
        if kind == "variable_declarator":
            self._declarator(node)
        elif kind == "call_expression":
            self._call(node)
        elif kind == "new_expression":
            self._new(node)
        elif kind in ("member_expression", "subscript_expression") and self._env_read(node):
            return
        elif kind in ("arrow_function", "function_expression"):
            # A closure handed to another call runs now (an array's map, an AI SDK tool's execute).
            for pattern in parameters(node):
                self.local |= _bound_names(pattern)
            body = function_body(node)
            if body is not None:
                self.visit(body)
        else:
            for child in node.named_children:
                self.visit(child)

    def _declarator(self, node: Node) -> None:
        target = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if value is None:
            return
        if target is not None and target.type == "identifier" and value.type in FUNCTION_TYPES:
            self.local_functions[text(target)] = value  # walked where it is called
            return
        self.visit(value)
        if target is not None and target.type == "identifier":
            made = self.kind(value)
            if made is not None:
                self.kinds[text(target)] = made
            else:
                self.kinds.pop(text(target), None)

    # -- what is found

    def _found(self, code: str, what: str, node: Node, model: bool = False) -> None:
        self.found.append(TsEffect(code, what, node, model))

    def _env_read(self, node: Node) -> bool:
        target = node.child_by_field_name("object") if node.type == "subscript_expression" else node
        qualified = self.module.qualify(target, self.local) if target is not None else None
        if qualified is None or not (qualified == "process.env" or qualified.startswith("process.env.")):
            return False
        if node.type == "member_expression" and qualified == "process.env":
            return False  # `process.env` passed whole: not a read of one variable here
        self._found("PT004", "process.env read", node)
        index = node.child_by_field_name("index")
        if index is not None:
            self.visit(index)
        return True

    def _new(self, node: Node) -> None:
        constructor = node.child_by_field_name("constructor")
        args = arguments(node)
        qualified = self.module.qualify(constructor, self.local) if constructor is not None else None
        if qualified in NEW_CODES and not args:
            self._found(NEW_CODES[qualified], f"new {qualified}()", node)
        for arg in args:
            self.visit(arg)

    def _call(self, node: Node) -> None:
        callee = node.child_by_field_name("function")
        args = arguments(node)
        if callee is None:
            return
        base, chain = call_name(callee)
        if chain == ["run"] and self._is_context(base):
            self._run_call(node, args)
            return
        qualified = self.module.qualify(callee, self.local)
        if qualified in AI_MODEL_CALLS:
            self._ai_call(node, qualified, args)
        elif qualified is not None and match_ts_call(qualified) is not None:
            code = match_ts_call(qualified)
            assert code is not None
            model = code == "PT001" and any(host in text(args[0]) for host in _MODEL_HOSTS) if args else False
            self._found(code, f"{qualified}() to a model API" if model else f"{qualified}()", node, model)
        elif base.type == "identifier" and self.kind(base) == CLIENT and model_method(chain):
            self._found("PT001", f"{text(base)}.{'.'.join(chain)}()", node, model=True)
        elif not chain and base.type == "identifier":
            self._helper(node, text(base), args)
        if callee.type != "identifier":
            self.visit(callee)
        for arg in args:
            self.visit(arg)

    def _run_call(self, node: Node, args: list[Node]) -> None:
        """ctx.run(name, action, options) or ctx.run(action): all is evaluated now but the action's body,
        whose result is journaled."""
        action = args[1] if len(args) >= 2 and args[0].type not in FUNCTION_TYPES else None
        action = action or (args[0] if args else None)
        for arg in args:
            if arg != action:
                self.visit(arg)
        if action is not None and "PT006" in self.project.selected:
            self._unkeyed_writes(node, action)

    def _unkeyed_writes(self, run: Node, action: Node) -> None:
        """PT006: HTTP writes the action makes without an idempotency key: in its own body, and in the
        functions it calls by name (`() => charge(order)`, the TypeScript way to hand ctx.run a function)."""
        owners: list[tuple[str, TsModule, Node]] = []
        if action.type in ("arrow_function", "function_expression"):
            owners.append(("the action", self.module, action))
            for call in _descendants(action, "call_expression"):
                callee = call.child_by_field_name("function")
                if callee is not None and callee.type == "identifier":
                    target = self._resolve(text(callee))
                    if target is not None:
                        owners.append((f"{text(callee)}()", *target))
        elif action.type == "identifier":
            target = self._resolve(text(action))
            if target is not None:
                owners.append((f"{text(action)}()", *target))
        for who, module, owner in owners:
            local = self.local if module is self.module else set()
            for what, call in writes_without_key(module, owner, local):
                where = "" if who == "the action" else f" ({Path(module.path).name}:{line(call)})"
                self._found("PT006", f"{who} calls {what}{where}", run)

    def _resolve(self, name: str) -> tuple[TsModule, Node] | None:
        """The function a name called here stands for: nested here, of this module, or imported from
        beside it."""
        if name in self.local_functions:
            return self.module, self.local_functions[name]
        if name in self.local:
            return None
        if name in self.module.functions:
            return self.module, self.module.functions[name]
        if name in self.module.imports:
            resolved = self.project.project.resolve(self.module, self.module.imports[name])
            if resolved is not None and resolved[1] in resolved[0].functions:
                return resolved[0], resolved[0].functions[resolved[1]]
        return None

    def _ai_call(self, node: Node, qualified: str, args: list[Node]) -> None:
        name = qualified.rsplit(".", 1)[-1]
        self._module_tools(node, name, property_value(args[0], "tools") if args else None)
        model = property_value(args[0], "model") if args else None
        made = self.kind(model)
        if made == DURABLE_MODEL:
            return
        if made == PLAIN_MODEL:
            self._found("PT001", f"{name}() with a model outside durableCalls", node, model=True)
            return
        where = f"model {text(model)!r}" if model is not None else "a model lint cannot read"
        self.undecided.append((f"{name}()'s {where} is journaled (wrapped with durableCalls)", node))

    def _module_tools(self, call: Node, name: str, tools: Node | None) -> None:
        """Tools defined at module level (`const tools = { x: tool({ execute }) }`): the call runs their
        `execute` whenever the model asks, on every replay too (durableCalls journals the model's answers,
        not the tools). Tools written in the call itself are walked with its arguments."""
        if tools is None or tools.type not in ("identifier", "shorthand_property_identifier"):
            return
        if text(tools) in self.local or text(tools) not in self.module.constants:
            return
        before = len(self.found)
        self.visit(self.module.constants[text(tools)])
        via = f"a tool's execute in {text(tools)}, given to {name}() at line {line(call)}"
        self.found[before:] = [replace(e, via=(via, *e.via)) for e in self.found[before:]]

    def _helper(self, node: Node, name: str, args: list[Node]) -> None:
        """A function of the linted code called now: what it does is done now, reported here."""
        target = self._resolve(name)
        if target is None or self.depth >= _DEPTH:
            return
        module, function = target
        kinds: dict[str, str] = {}
        types = parameter_types(function)
        for index, pattern in enumerate(parameters(function)):
            if pattern.type != "identifier":
                continue
            made = self.kind(args[index]) if index < len(args) else None
            if made is None and index < len(types) and types[index].rsplit(".", 1)[-1].endswith("Context"):
                made = CONTEXT  # a `ctx: restate.Context` parameter, whoever passes it
            if made is not None:
                kinds[text(pattern)] = made
        if (
            module is self.module
            and function.start_byte >= self.function.start_byte
            and (function.end_byte <= self.function.end_byte)
        ):
            # A function nested in this one sees this one's names.
            kinds = {**self.kinds, **kinds}
        effects, undecided = self.project.summary(module, function, kinds, self.depth + 1)
        called = f"{name}() at line {line(node)}"
        for effect in effects:
            if module is self.module:
                self.found.append(replace(effect, via=(called, *effect.via)))
            else:
                where = f"{Path(module.path).name}:{line(effect.node)}"
                what = f"{name}() calls {effect.what} ({where})"
                self.found.append(TsEffect(effect.code, what, node, effect.model))
        for why, at in undecided:
            self.undecided.append((why, at if module is self.module else node))

    def _is_context(self, node: Node) -> bool:
        """The handler's context, a parameter named as Restate's examples name it (`ctx`), or a value cast to
        a Restate context (`(experimental_context as restate.Context)`)."""
        if node.type == "as_expression":
            cast = node.named_children[-1] if node.named_children else None
            return text(cast).rsplit(".", 1)[-1].endswith("Context")
        if node.type != "identifier":
            return False
        if self.kind(node) == CONTEXT:
            return True
        name = text(node)
        own = any(name in _bound_names(p) for p in parameters(self.function))
        return own and name in ("ctx", "context") and name not in self.kinds

    # -- what a value is

    def kind(self, node: Node | None) -> str | None:
        """What lint knows a value is: the context, a model client, a model (plain or durable), a provider."""
        return kind_of(self.project.project, self.module, node, self.kinds, self.local)


def kind_of(
    project: TsProject,
    module: TsModule,
    node: Node | None,
    kinds: dict[str, str] | None = None,
    local: set[str] | None = None,
    depth: int = 0,
) -> str | None:
    """What a value is, as far as lint follows it (names, module constants, imported constants)."""
    if node is None or depth > 8:
        return None
    kinds = kinds or {}
    local = local or set()
    kind = node.type
    if kind in ("identifier", "shorthand_property_identifier"):
        name = text(node)
        if name in kinds:
            return kinds[name]
        if name in local:
            return None
        if name in module.constants:
            return kind_of(project, module, module.constants[name], depth=depth + 1)
        if name in module.imports:
            resolved = project.resolve(module, module.imports[name])
            if resolved is not None and resolved[1] in resolved[0].constants:
                target, constant = resolved
                return kind_of(project, target, target.constants[constant], depth=depth + 1)
        return None
    if kind in ("await_expression", "parenthesized_expression", "as_expression", "satisfies_expression"):
        inner = node.named_children[0] if node.named_children else None
        return kind_of(project, module, inner, kinds, local, depth + 1)
    if kind == "non_null_expression":
        return kind_of(project, module, node.named_children[0], kinds, local, depth + 1)
    if kind in ("string", "template_string"):
        return PLAIN_MODEL  # a model's id, called through the AI SDK's gateway
    if kind == "new_expression":
        constructor = node.child_by_field_name("constructor")
        qualified = module.qualify(constructor, local) if constructor is not None else None
        return CLIENT if qualified in MODEL_CLIENTS else None
    if kind != "call_expression":
        return None
    callee = node.child_by_field_name("function")
    if callee is None:
        return None
    qualified = module.qualify(callee, local)
    args = arguments(node)
    if qualified == WRAP_MODEL and args:
        middleware = property_value(args[0], "middleware")
        if middleware is not None and any(
            module.qualify(c.child_by_field_name("function") or c, local) == DURABLE_CALLS
            for c in _descendants(middleware, "call_expression")
        ):
            return DURABLE_MODEL
        return kind_of(project, module, property_value(args[0], "model"), kinds, local, depth + 1)
    if qualified is not None:
        made = provider_model(qualified)
        if made is not None:
            return made
    base, _chain = call_name(callee)
    if base.type == "identifier" and kind_of(project, module, base, kinds, local, depth + 1) == PROVIDER:
        return PLAIN_MODEL
    return None


class TsSummaries:
    """What each function of the TypeScript files does when called, walked once per kind of arguments."""

    def __init__(self, project: TsProject, selected: frozenset[str]) -> None:
        self.project = project
        self.selected = selected
        """The codes reported."""
        self._summaries: dict[tuple[object, ...], tuple[list[TsEffect], list[tuple[str, Node]]]] = {}
        self._in_progress: set[tuple[object, ...]] = set()

    def summary(
        self, module: TsModule, function: Node, kinds: dict[str, str], depth: int
    ) -> tuple[list[TsEffect], list[tuple[str, Node]]]:
        key = (str(module.path), function.start_byte, function.end_byte, tuple(sorted(kinds.items())))
        if key in self._summaries:
            return self._summaries[key]
        if key in self._in_progress:
            return [], []  # recursion: what it does is being collected further up
        self._in_progress.add(key)
        try:
            walker = TsWalker(self, module, function, kinds, depth)
            walker.walk_body()
            seen: set[tuple[str, int]] = set()
            effects = []
            for effect in walker.found:
                if (effect.code, effect.node.start_byte) not in seen:
                    seen.add((effect.code, effect.node.start_byte))
                    effects.append(effect)
            result = (effects, walker.undecided)
        finally:
            self._in_progress.discard(key)
        self._summaries[key] = result
        return result


def _bound_names(pattern: Node) -> set[str]:
    if pattern.type == "identifier":
        return {text(pattern)}
    names = set()
    for node in _descendants(pattern, "identifier", "shorthand_property_identifier_pattern"):
        names.add(text(node))
    return names


def _descendants(node: Node, *types: str) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            yield current
        stack.extend(current.named_children)


def _own_nodes(body: Node) -> Iterator[Node]:
    """The body's nodes, not those of the functions nested in it."""
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        yield node
        if node.type not in FUNCTION_TYPES and node.type not in _SKIPPED:
            stack.extend(node.named_children)
