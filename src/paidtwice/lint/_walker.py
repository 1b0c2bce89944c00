"""Walks a function as it executes, collecting what a replay does again (`Walker`), and follows the calls it
makes into functions and methods of the linted tree, each summarized once (`Project`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

from paidtwice.lint._index import (
    ClassInfo,
    Effect,
    FunctionNode,
    ModuleInfo,
    Scope,
    attr_chain,
    index_module,
)
from paidtwice.lint._parse import NeedsNewerParser, Parser
from paidtwice.lint._rules import (
    ADK_RUNNER,
    ADK_RUNNER_CLASSES,
    ADK_RUNS,
    AGENT_WITH_MODEL,
    CLIENT_CLASSES,
    DEFAULT_CODES,
    DURABLE_RUNNER_RUN,
    RESTATE_CONTEXT,
    RUN_CONFIG_WITH_MODEL,
    adk_undecided,
    adk_undecided_why,
    match_call,
    match_method,
)
from paidtwice.lint._writes import writes_without_key

__all__ = ["Project", "Walker"]

_RUN_METHODS = {"run", "run_typed"}
_TO_THREAD = {"asyncio.to_thread", "anyio.to_thread.run_sync"}


class Project:
    """The linted files, parsed on first use, and what is known about each function."""

    def __init__(
        self, files: dict[str, Path], selected: frozenset[str] = DEFAULT_CODES, parser: Parser | None = None
    ) -> None:
        self._files = files
        self._parser = parser or Parser()
        """module name -> file, for every file found."""
        self.selected = selected
        """The codes reported."""
        self._modules: dict[str, ModuleInfo | None] = {}
        self._summaries: dict[tuple[int, str | None], list[Effect]] = {}
        self._undecided: dict[tuple[int, str | None], list[str]] = {}
        """What a function's summary could not decide (said where a handler calls it)."""
        self._in_progress: set[tuple[int, str | None]] = set()

    def add(self, module: ModuleInfo) -> None:
        self._modules.setdefault(module.name, module)

    def module(self, name: str) -> ModuleInfo | None:
        if name in self._modules:
            return self._modules[name]
        path = self._files.get(name)
        result: ModuleInfo | None = None
        if path is not None:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                tree = self._parser.parse(text, str(path))
            except (OSError, SyntaxError, ValueError, NeedsNewerParser):
                tree = None
            if tree is not None:
                result = index_module(name, str(path), tree, text)
        self._modules[name] = result
        return result

    def resolve_function(self, qualified: str, depth: int = 0) -> tuple[ModuleInfo, FunctionNode] | None:
        """The in-tree function a qualified name stands for (following re-exports)."""
        module_name, _, attr = qualified.rpartition(".")
        if not module_name or depth > 5:
            return None
        module = self.module(module_name)
        if module is None:
            return None
        if attr in module.functions:
            return module, module.functions[attr]
        if attr in module.imports:
            return self.resolve_function(module.imports[attr], depth + 1)
        return None

    def resolve_class(self, qualified: str) -> ClassInfo | None:
        module_name, _, attr = qualified.rpartition(".")
        module = self.module(module_name) if module_name else None
        if module is None:
            return None
        if attr in module.classes:
            return module.classes[attr]
        if attr in module.imports and module.imports[attr] != qualified:
            return self.resolve_class(module.imports[attr])
        return None

    def summary(self, module: ModuleInfo, function: FunctionNode, self_class: str | None) -> list[Effect]:
        """Everything a call of `function` does that a replay repeats (first occurrence per code)."""
        key = (id(function), self_class)
        if key in self._summaries:
            return self._summaries[key]
        if key in self._in_progress:
            return []  # recursion: what it does is being collected further up
        self._in_progress.add(key)
        try:
            walker = Walker(self, module, function, self_class)
            walker.walk_body()
            effects: dict[str, Effect] = {}
            for effect, _node in walker.found:
                effects.setdefault(effect.code, effect)
            result = list(effects.values())
            self._undecided[key] = list(dict.fromkeys(why for why, _node in walker.undecided))
        finally:
            self._in_progress.discard(key)
        self._summaries[key] = result
        return result

    def undecided(self, function: FunctionNode, self_class: str | None) -> list[str]:
        """What a call of `function` does that lint could not decide (after its `summary`)."""
        return self._undecided.get((id(function), self_class), [])


class Walker(ast.NodeVisitor):
    """Walks one function body as it executes: not into nested defs, not into run actions."""

    def __init__(
        self, project: Project, module: ModuleInfo, function: FunctionNode, self_class: str | None
    ) -> None:
        self.project = project
        self.module = module
        self.function = function
        self.self_class = project.resolve_class(self_class) if self_class else None
        self.scope = Scope(module, {})
        if self.self_class is not None and function.args.args:
            self.scope.local_instances[function.args.args[0].arg] = self.self_class.qualified
        arguments = (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
        self.params = {a.arg for a in arguments}
        self._annotated_runners(function, arguments)
        self.found: list[tuple[Effect, ast.AST]] = []
        self.undecided: list[tuple[str, ast.AST]] = []
        """Calls lint cannot judge, and why: reported as such, never as findings."""
        self.explicit_recovery = False
        """The handler runs under `explicit_recovery`: its ctx.run actions execute again on every retry, so
        what they call is walked, a network or model call reported as PT007."""
        self._in_action = 0

    def _annotated_runners(self, function: FunctionNode, arguments: Sequence[ast.arg]) -> None:
        """A parameter annotated as an ADK Runner: which runner a caller passes (with or without Restate's
        plugin) is not known here, so its runs are not decided, never passed or flagged."""
        for argument in arguments:
            if argument.annotation is None or argument.arg in self.scope.local_instances:
                continue
            annotation = argument.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                try:
                    annotation = ast.parse(annotation.value, mode="eval").body
                except SyntaxError:
                    continue
            if self.scope.qualify(annotation) in ADK_RUNNER_CLASSES:
                why = (
                    f"the runner is {function.name}()'s parameter {argument.arg!r}, and lint does not follow"
                    " which runner a caller passes"
                )
                self.scope.local_instances[argument.arg] = adk_undecided("google.adk.Runner", why)

    def walk_body(self) -> None:
        # Nested defs can be called before they appear in the source; collect them first.
        for node in self._own_nodes(self.function.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.scope.local_functions[node.name] = node
        for statement in self.function.body:
            self.visit(statement)

    def _own_nodes(self, body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                stack.extend(ast.iter_child_nodes(node))

    # -- structure

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._decorators(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._decorators(node)

    def _decorators(self, node: FunctionNode) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        made = self.scope.constructed(node.value)
        for target in node.targets:
            self._bind(target, made)
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind(node.target, self.scope.constructed(node.value))

    def _bind(self, target: ast.expr, made: str | None) -> None:
        if isinstance(target, ast.Name):
            if made is not None:
                self.scope.local_instances[target.id] = made
            else:
                self.scope.local_instances.pop(target.id, None)

    def visit_With(self, node: ast.With) -> None:
        self._with(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
        self._with(node)

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, self.scope.constructed(item.context_expr))
        for statement in node.body:
            self.visit(statement)

    # -- what is found

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and self.scope.qualify(node.value) == "os.environ":
            self._found("PT004", "os.environ[...]", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _RUN_METHODS and self._is_context(func.value):
            self._run_call(node)
            return
        self._call(node)
        self.generic_visit(node)

    def _is_context(self, node: ast.expr) -> bool:
        """A parameter (ctx, or however the handler names it) that is not a known client or module; or the
        context a tool gets from the integrations' `restate_context()`."""
        if self.scope.made(node) == RESTATE_CONTEXT:
            return True
        return (
            isinstance(node, ast.Name)
            and node.id in self.params
            and node.id not in self.scope.local_instances
            and node.id not in self.module.imports
        )

    def _run_call(self, node: ast.Call) -> None:
        """ctx.run(name, action, *args, **kwargs): everything is evaluated now except the action's body."""
        action: ast.expr | None = node.args[1] if len(node.args) >= 2 else None
        for keyword in node.keywords:
            if keyword.arg == "action":
                action = keyword.value
        self.visit(node.func)
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            if argument is action:
                self._action(argument)
                if "PT006" in self.project.selected:
                    self._unkeyed_writes(node, argument)
            else:
                self.visit(argument)

    def _unkeyed_writes(self, run: ast.Call, action: ast.expr) -> None:
        """PT006: HTTP writes the action makes without an idempotency key (its own body, one level)."""
        if isinstance(action, ast.Call) and action.args:
            if self.scope.qualify(action.func) in {"functools.partial", "partial"}:
                action = action.args[0]
        if isinstance(action, ast.Lambda):
            for what, _line in writes_without_key(action.body, self.scope):
                self._found("PT006", f"the action calls {what}", run)
            return
        target: tuple[ModuleInfo, FunctionNode] | None = None
        if isinstance(action, ast.Name) and action.id in self.scope.local_functions:
            target = self.module, self.scope.local_functions[action.id]
        else:
            qualified = self.scope.qualify(action)
            target = self.project.resolve_function(qualified) if qualified else None
        if target is None:
            return
        module, function = target
        for what, line in writes_without_key(function, Scope(module, {})):
            where = f"{Path(module.path).name}:{line}"
            self._found("PT006", f"{function.name}() calls {what} ({where})", run)

    def _action(self, action: ast.expr) -> None:
        if self.explicit_recovery:
            self._in_action += 1
            try:
                self._explicit_action(action)
            finally:
                self._in_action -= 1
            return
        if isinstance(action, ast.Call) and self.scope.qualify(action.func) in {
            "functools.partial",
            "partial",
        }:
            for argument in [*action.args[1:], *(k.value for k in action.keywords)]:
                self.visit(argument)
            return
        if isinstance(action, ast.Name | ast.Attribute | ast.Lambda):
            return  # journaled: its body runs once, its result comes from the journal on replay
        self.visit(action)

    def _explicit_action(self, action: ast.expr) -> None:
        """Under explicit_recovery the action runs again on every attempt: walk it as a call made now."""
        target: ast.expr = action
        if isinstance(action, ast.Call) and self.scope.qualify(action.func) in {
            "functools.partial",
            "partial",
        }:
            for argument in [*action.args[1:], *(k.value for k in action.keywords)]:
                self.visit(argument)
            if not action.args:
                return
            target = action.args[0]
        if isinstance(target, ast.Lambda):
            self.visit(target.body)
        elif isinstance(target, ast.Name | ast.Attribute):
            self._call(ast.copy_location(ast.Call(func=target, args=[], keywords=[]), action))
        else:
            self.visit(target)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        offloaded = self._offloaded(node)
        if offloaded is not None:
            # The function runs now, on a worker thread: what it does is done again on replay all the same.
            self._call(ast.copy_location(ast.Call(func=offloaded, args=[], keywords=[]), node))
            return
        qualified = self.scope.qualify(func)
        if qualified == DURABLE_RUNNER_RUN:
            unjournaled = self._unjournaled_model(node)
            if unjournaled is not None:
                self._found("PT001", f"{qualified} with {unjournaled}", node)
            return
        if qualified is not None:
            code = match_call(qualified)
            if code is not None:
                self._found(code, qualified, node)
                return
            resolved = self.project.resolve_function(qualified)
            if resolved is not None:
                self._through(node, qualified.rsplit(".", 1)[-1], *resolved, None)
                return
        if isinstance(func, ast.Name) and func.id in self.scope.local_functions:
            self._through(node, func.id, self.module, self.scope.local_functions[func.id], self._self_name())
            return
        base, attrs = attr_chain(func)
        instance = self._instance_of(base, attrs)
        if instance is None:
            return
        kind, chain = instance
        why = adk_undecided_why(kind)
        if why is not None:
            if chain and chain[-1] in ADK_RUNS:
                what = f"google.adk.Runner.{chain[-1]} journals its model calls: {why}"
                self.undecided.append((what, node))
            return
        code = match_method(kind, chain)
        if code is not None:
            what = ".".join([kind, *chain])
            if kind == ADK_RUNNER:
                what = f"google.adk.Runner.{chain[-1]} without restate.ext.adk.RestatePlugin on its app"
            self._found(code, what, node)
            return
        klass = self.project.resolve_class(kind)
        if klass is not None and len(chain) == 1 and chain[0] in klass.methods:
            owner = self.project.module(klass.qualified.rpartition(".")[0])
            if owner is not None:
                self._through(
                    node, f"{klass.name}.{chain[0]}", owner, klass.methods[chain[0]], klass.qualified
                )

    def _unjournaled_model(self, run: ast.Call) -> str | None:
        """What DurableRunner.run(agent, input, run_config=...) runs outside the journal: a model instance on
        the agent or in the run config (it journals only models its provider resolves by name)."""
        agent = run.args[0] if run.args else None
        config = None
        for keyword in run.keywords:
            if keyword.arg == "starting_agent":
                agent = keyword.value
            elif keyword.arg == "run_config":
                config = keyword.value
        if agent is not None and self.scope.made(agent) == AGENT_WITH_MODEL:
            return "an agent given a model instance (journaled only when named: model='gpt-4o-mini')"
        if config is not None and self.scope.made(config) == RUN_CONFIG_WITH_MODEL:
            return "a run config given a model instance (journaled only when named: model='gpt-4o-mini')"
        return None

    def _offloaded(self, node: ast.Call) -> ast.expr | None:
        """The function `asyncio.to_thread(f, ...)` or `loop.run_in_executor(executor, f, ...)` runs."""
        if self.scope.qualify(node.func) in _TO_THREAD and node.args:
            return node.args[0]
        _, attrs = attr_chain(node.func)
        if attrs and attrs[-1] == "run_in_executor" and len(node.args) >= 2:
            return node.args[1]
        return None

    def _self_name(self) -> str | None:
        return self.self_class.qualified if self.self_class is not None else None

    def _instance_of(self, base: ast.expr, attrs: list[str]) -> tuple[str, list[str]] | None:
        """(class, remaining attribute chain) when the call's receiver is a known instance."""
        if isinstance(base, ast.Call | ast.BinOp):
            # Path("x").read_text(), httpx.Client().get(...), (prompt | model).invoke(...)
            made = self.scope.constructed(base)
            known = made in CLIENT_CLASSES or adk_undecided_why(made) is not None
            return (made, list(attrs)) if made is not None and known else None
        if not isinstance(base, ast.Name):
            return None
        kind = self.scope.local_instances.get(base.id)
        if kind is None and base.id not in self.scope.local_functions:
            kind = self.module.instances.get(base.id)
        if kind is None:
            return None
        chain = list(attrs)
        # self.client.chat.completions.create: follow attributes the class assigned.
        while chain:
            klass = self.project.resolve_class(kind)
            if klass is None or chain[0] not in klass.attributes:
                break
            kind = klass.attributes[chain.pop(0)]
        return kind, chain

    def _through(
        self,
        node: ast.Call,
        name: str,
        module: ModuleInfo,
        function: FunctionNode,
        self_class: str | None,
    ) -> None:
        effects = self.project.summary(module, function, self_class)
        for why in self.project.undecided(function, self_class):
            self.undecided.append((why, node))
        for effect in effects:
            where = f"({Path(effect.path).name}:{effect.line})"
            # Said once, after the innermost call, however deep the helpers go.
            what = effect.what if effect.what.endswith(where) else f"{effect.what} {where}"
            code = self._in_action_code(effect.code)
            if code is not None:
                self.found.append((Effect(code, f"{name}() calls {what}", effect.path, effect.line), node))

    def _found(self, code: str, what: str, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        found = self._in_action_code(code)
        if found is not None:
            self.found.append((Effect(found, what, self.module.path, line), node))

    def _in_action_code(self, code: str) -> str | None:
        """Inside an explicit-recovery action: a network or model call is PT007; the rest is journaled (its
        result is recorded, and no replay compares it), so not reported."""
        if not self._in_action:
            return code
        return "PT007" if code == "PT001" else None
