"""Find the calls in Restate handlers that a replay makes (and pays for) again, statically.

A handler is re-executed from its first line on every attempt; what it got from the journal comes back
unchanged, anything else is done again. So lint walks each handler's body, and every function or method it
calls that is defined in the linted tree, looking for calls whose result can differ between attempts
(`_rules`). The action handed to `ctx.run`/`ctx.run_typed` is not walked: its result is journaled. A finding
is reported where the handler makes the call, also when the call is deep in a helper, because that is the
line that must change (wrap it in `ctx.run_typed`); the message names where the helper makes it.

Resolution is by name, as far as it can be decided without running the code: imports and their aliases,
module-level and local instances of known clients (`client = AsyncOpenAI()`), `self.x` attributes assigned
in a class's methods, functions and classes of the same module, and modules of the same package found among
the linted files. What cannot be resolved is not reported.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paidtwice.lint._rules import (
    CLIENT_CLASSES,
    CODES,
    DEFAULT_CODES,
    IDEMPOTENCY_HEADER,
    LANGCHAIN_AGENT,
    PARSE_ERROR,
    RESTATE_MIDDLEWARE,
    derived_model,
    match_call,
    match_method,
    model_class,
    mutating_call,
    mutating_method,
)

__all__ = ["Finding", "LintResult", "lint_paths", "lint_source"]

_SERVICE_CLASSES = {"Service", "VirtualObject", "Workflow"}
_HANDLER_DECORATORS = {"handler", "main"}
_RUN_METHODS = {"run", "run_typed"}
_TO_THREAD = {"asyncio.to_thread", "anyio.to_thread.run_sync"}
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".nox", ".mypy_cache"}
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Finding:
    """One call a replay makes again."""

    path: str
    """The file, as given (or found under a given directory)."""
    line: int
    """1-based line of the call in the handler (of the error, for PT000)."""
    col: int
    """1-based column."""
    code: str
    """Rule code, see `CODES`."""
    message: str
    """What was found, and through which helper."""

    def format(self) -> str:
        """`path:line:col: CODE message`, the usual linter line."""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    @property
    def fix(self) -> str:
        """How to make the call replay-safe."""
        return CODES[self.code].fix


@dataclass(frozen=True)
class LintResult:
    """Every finding of one run, in path and line order, and how much was read."""

    findings: tuple[Finding, ...]
    """Findings, sorted."""
    files: int
    """Python files read."""
    lines: int
    """Lines read."""
    handlers: int
    """Restate handlers found."""


@dataclass(frozen=True)
class _Effect:
    code: str
    what: str
    """The call, qualified: `httpx.AsyncClient.post`."""
    path: str
    line: int


@dataclass
class _Class:
    name: str
    qualified: str
    methods: dict[str, FunctionNode]
    attributes: dict[str, str] = field(default_factory=dict)
    """self.<name> -> qualified class of what was assigned to it."""


@dataclass
class _Module:
    name: str
    path: str
    tree: ast.Module
    lines: list[str]
    imports: dict[str, str] = field(default_factory=dict)
    functions: dict[str, FunctionNode] = field(default_factory=dict)
    classes: dict[str, _Class] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)
    services: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    """Dotted name from the topmost directory that is a package down to the file."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


def _chain(node: ast.expr) -> tuple[ast.expr, list[str]]:
    """`a.b.c` -> (Name a, ["b", "c"])."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    return node, attrs


class _Project:
    """The linted files, parsed on first use, and what is known about each function."""

    def __init__(self, files: dict[str, Path], selected: frozenset[str] = DEFAULT_CODES) -> None:
        self._files = files
        """module name -> file, for every file found."""
        self.selected = selected
        """The codes reported."""
        self._modules: dict[str, _Module | None] = {}
        self._summaries: dict[tuple[int, str | None], list[_Effect]] = {}
        self._in_progress: set[tuple[int, str | None]] = set()

    def add(self, module: _Module) -> None:
        self._modules.setdefault(module.name, module)

    def module(self, name: str) -> _Module | None:
        if name in self._modules:
            return self._modules[name]
        path = self._files.get(name)
        result: _Module | None = None
        if path is not None:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                tree = ast.parse(text, filename=str(path))
            except (OSError, SyntaxError, ValueError):
                tree = None
            if tree is not None:
                result = _index(name, str(path), tree, text)
        self._modules[name] = result
        return result

    def resolve_function(self, qualified: str, depth: int = 0) -> tuple[_Module, FunctionNode] | None:
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

    def resolve_class(self, qualified: str) -> _Class | None:
        module_name, _, attr = qualified.rpartition(".")
        module = self.module(module_name) if module_name else None
        if module is None:
            return None
        if attr in module.classes:
            return module.classes[attr]
        if attr in module.imports and module.imports[attr] != qualified:
            return self.resolve_class(module.imports[attr])
        return None

    def summary(self, module: _Module, function: FunctionNode, self_class: str | None) -> list[_Effect]:
        """Everything a call of `function` does that a replay repeats (first occurrence per code)."""
        key = (id(function), self_class)
        if key in self._summaries:
            return self._summaries[key]
        if key in self._in_progress:
            return []  # recursion: what it does is being collected further up
        self._in_progress.add(key)
        try:
            walker = _Walker(self, module, function, self_class)
            walker.walk_body()
            effects: dict[str, _Effect] = {}
            for effect, _node in walker.found:
                effects.setdefault(effect.code, effect)
            result = list(effects.values())
        finally:
            self._in_progress.discard(key)
        self._summaries[key] = result
        return result


def _relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _index(name: str, path: str, tree: ast.Module, text: str) -> _Module:
    module = _Module(name, path, tree, text.splitlines())
    is_package = path.endswith("__init__.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    module.imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                source = _relative(name, is_package, node.level, node.module)
            for alias in node.names:
                if alias.name != "*":
                    module.imports[alias.asname or alias.name] = f"{source}.{alias.name}"
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            module.functions[statement.name] = statement
        elif isinstance(statement, ast.ClassDef):
            methods = {
                item.name: item
                for item in statement.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            module.classes[statement.name] = _Class(statement.name, f"{name}.{statement.name}", methods)
    scope = _Scope(module, {})
    for klass in module.classes.values():
        for method in klass.methods.values():
            for node in ast.walk(method):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    made = scope.constructed(node.value)
                    for target in targets:
                        if (
                            made
                            and isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            klass.attributes[target.attr] = made
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        made = scope.constructed(value)
        if made is None:
            continue
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            module.instances[target.id] = made
            if made.startswith("restate.") and made.rsplit(".", 1)[-1] in _SERVICE_CLASSES:
                module.services.add(target.id)
    return module


class _Scope:
    """Resolves names in one function (its locals over the module's names)."""

    def __init__(self, module: _Module, local_instances: dict[str, str]) -> None:
        self.module = module
        self.local_instances = local_instances
        self.local_functions: dict[str, FunctionNode] = {}

    def qualify(self, node: ast.expr) -> str | None:
        """`h.post` with `import httpx as h` -> "httpx.post"; None when not a dotted name."""
        base, attrs = _chain(node)
        if not isinstance(base, ast.Name):
            return None
        name = base.id
        if name in self.local_instances or name in self.local_functions:
            return None
        module = self.module
        if name in module.imports:
            head = module.imports[name]
        elif name in module.functions or name in module.classes:
            head = f"{module.name}.{name}"
        elif name in module.instances:
            return None
        else:
            head = name  # a builtin (open) or an unknown name
        return ".".join([head, *attrs])

    def constructed(self, value: ast.expr) -> str | None:
        """The class an expression makes an instance of, when it is a known client or an in-tree class."""
        if isinstance(value, ast.Await):
            value = value.value
        if not isinstance(value, ast.Call):
            return None
        qualified = self.qualify(value.func)
        if qualified is None:
            # model.bind_tools(...), ChatOpenAI(...).bind_tools(...): another chat model.
            base, attrs = _chain(value.func)
            made = self.constructed(base) if isinstance(base, ast.Call) else self.instance(base)
            return made if made is not None and derived_model(made, attrs) else None
        if qualified == LANGCHAIN_AGENT:
            return None if self._restate_middleware(value) else LANGCHAIN_AGENT
        if qualified in CLIENT_CLASSES:
            return qualified
        made = model_class(qualified)
        if made is not None:
            return made
        if qualified.startswith("restate.") and qualified.rsplit(".", 1)[-1] in _SERVICE_CLASSES:
            return "restate." + qualified.rsplit(".", 1)[-1]
        if qualified in {"random.Random", "random.SystemRandom"}:
            return "random.Random"
        # Something that looks like a class: an in-tree one is resolved where its methods are called.
        return qualified if qualified.rsplit(".", 1)[-1][:1].isupper() else None

    def instance(self, node: ast.expr) -> str | None:
        """The class of the instance a bare name holds (a local one first), if known."""
        if not isinstance(node, ast.Name):
            return None
        return self.local_instances.get(node.id) or self.module.instances.get(node.id)

    def _restate_middleware(self, call: ast.Call) -> bool:
        """create_agent(..., middleware=[RestateMiddleware()]): Restate journals the agent's model calls."""
        for keyword in call.keywords:
            if keyword.arg != "middleware" or not isinstance(keyword.value, ast.List | ast.Tuple):
                continue
            for item in keyword.value.elts:
                made = self.constructed(item) if isinstance(item, ast.Call) else self.instance(item)
                if made == RESTATE_MIDDLEWARE:
                    return True
        return False


class _Walker(ast.NodeVisitor):
    """Walks one function body as it executes: not into nested defs, not into run actions."""

    def __init__(
        self, project: _Project, module: _Module, function: FunctionNode, self_class: str | None
    ) -> None:
        self.project = project
        self.module = module
        self.function = function
        self.self_class = project.resolve_class(self_class) if self_class else None
        self.scope = _Scope(module, {})
        if self.self_class is not None and function.args.args:
            self.scope.local_instances[function.args.args[0].arg] = self.self_class.qualified
        self.params = {
            a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
        }
        self.found: list[tuple[_Effect, ast.AST]] = []

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
        """A parameter (ctx, or however the handler names it) that is not a known client or module."""
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
            for what, _line in _writes_without_key(action.body, self.scope):
                self._found("PT006", f"the action calls {what}", run)
            return
        target: tuple[_Module, FunctionNode] | None = None
        if isinstance(action, ast.Name) and action.id in self.scope.local_functions:
            target = self.module, self.scope.local_functions[action.id]
        else:
            qualified = self.scope.qualify(action)
            target = self.project.resolve_function(qualified) if qualified else None
        if target is None:
            return
        module, function = target
        for what, line in _writes_without_key(function, _Scope(module, {})):
            where = f"{Path(module.path).name}:{line}"
            self._found("PT006", f"{function.name}() calls {what} ({where})", run)

    def _action(self, action: ast.expr) -> None:
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

    def _call(self, node: ast.Call) -> None:
        func = node.func
        offloaded = self._offloaded(node)
        if offloaded is not None:
            # The function runs now, on a worker thread: what it does is done again on replay all the same.
            self._call(ast.copy_location(ast.Call(func=offloaded, args=[], keywords=[]), node))
            return
        qualified = self.scope.qualify(func)
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
        base, attrs = _chain(func)
        instance = self._instance_of(base, attrs)
        if instance is None:
            return
        kind, chain = instance
        code = match_method(kind, chain)
        if code is not None:
            self._found(code, ".".join([kind, *chain]), node)
            return
        klass = self.project.resolve_class(kind)
        if klass is not None and len(chain) == 1 and chain[0] in klass.methods:
            owner = self.project.module(klass.qualified.rpartition(".")[0])
            if owner is not None:
                self._through(
                    node, f"{klass.name}.{chain[0]}", owner, klass.methods[chain[0]], klass.qualified
                )

    def _offloaded(self, node: ast.Call) -> ast.expr | None:
        """The function `asyncio.to_thread(f, ...)` or `loop.run_in_executor(executor, f, ...)` runs."""
        if self.scope.qualify(node.func) in _TO_THREAD and node.args:
            return node.args[0]
        _, attrs = _chain(node.func)
        if attrs and attrs[-1] == "run_in_executor" and len(node.args) >= 2:
            return node.args[1]
        return None

    def _self_name(self) -> str | None:
        return self.self_class.qualified if self.self_class is not None else None

    def _instance_of(self, base: ast.expr, attrs: list[str]) -> tuple[str, list[str]] | None:
        """(class, remaining attribute chain) when the call's receiver is a known instance."""
        if isinstance(base, ast.Call):
            made = self.scope.constructed(base)  # Path("x").read_text(), httpx.Client().get(...)
            return (made, list(attrs)) if made in CLIENT_CLASSES else None
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
        module: _Module,
        function: FunctionNode,
        self_class: str | None,
    ) -> None:
        for effect in self.project.summary(module, function, self_class):
            where = f"{Path(effect.path).name}:{effect.line}"
            self.found.append(
                (
                    _Effect(effect.code, f"{name}() calls {effect.what} ({where})", effect.path, effect.line),
                    node,
                )
            )

    def _found(self, code: str, what: str, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        self.found.append((_Effect(code, what, self.module.path, line), node))


def _is_key(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lower() == IDEMPOTENCY_HEADER
    )


_MODEL_PATHS = ("/chat/completions", "/completions", "/embeddings", "/responses", "/messages")


def _model_api(call: ast.Call) -> bool:
    """A POST to a model API (its URL's literal text ends like OpenAI's or Anthropic's endpoints): a model
    call is paid for again, which journaling it prevents, but it changes nothing on the other side."""
    verb = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    position = 1 if verb == "request" else 0  # request("POST", url) / post(url)
    url = call.args[position] if len(call.args) > position else None
    url = url or next((k.value for k in call.keywords if k.arg == "url"), None)
    if url is None:
        return False
    literal = [n.value for n in ast.walk(url) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return bool(literal) and literal[-1].rstrip("/").endswith(_MODEL_PATHS)


def _writes_without_key(owner: ast.AST, scope: _Scope) -> Iterator[tuple[str, int]]:
    """HTTP writes (POST, PUT, PATCH, DELETE) under `owner` that send no Idempotency-Key header.

    A call sends the key when its `headers=` is a dict literal with that key, or is a name and the key is
    spelled somewhere in the same function (headers built up before the call)."""
    spelled = any(_is_key(n) for n in ast.walk(owner))
    for node in ast.walk(owner):
        # Clients bound in the action itself: `async with httpx.AsyncClient() as client`, `c = Client()`.
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                made = scope.constructed(item.context_expr)
                if isinstance(item.optional_vars, ast.Name) and made is not None:
                    scope.local_instances[item.optional_vars.id] = made
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            made = scope.constructed(node.value)
            if made is not None:
                scope.local_instances[node.targets[0].id] = made
    for node in ast.walk(owner):
        if not isinstance(node, ast.Call):
            continue
        first = node.args[0] if node.args else None
        literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        what = None
        qualified = scope.qualify(node.func)
        if qualified is not None and mutating_call(qualified, literal):
            what = qualified
        else:
            base, attrs = _chain(node.func)
            kind = None
            if isinstance(base, ast.Name):
                kind = scope.local_instances.get(base.id) or scope.module.instances.get(base.id)
            elif isinstance(base, ast.Call):
                kind = scope.constructed(base)
            if kind is not None and mutating_method(kind, attrs, literal):
                what = ".".join([kind, *attrs])
        if what is None or _model_api(node):
            continue
        headers = next((k.value for k in node.keywords if k.arg == "headers"), None)
        if isinstance(headers, ast.Dict):
            if any(
                isinstance(k, ast.Constant)
                and isinstance(k.value, str)
                and k.value.lower() == IDEMPOTENCY_HEADER
                for k in headers.keys
            ):
                continue
        elif headers is not None and spelled:
            continue
        yield what, node.lineno


def _noqa(line: str, code: str) -> bool:
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in re.split(r"[\s,]+", codes.upper())


def _handlers(module: _Module) -> Iterator[tuple[FunctionNode, str | None]]:
    """Every function registered as a Restate handler, with the class it is a method of (if any)."""

    def registered(function: FunctionNode) -> bool:
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            base, attrs = _chain(target)
            if (
                isinstance(base, ast.Name)
                and len(attrs) == 1
                and attrs[0] in _HANDLER_DECORATORS
                and base.id in module.services
            ):
                return True
        return False

    for function in module.functions.values():
        if registered(function):
            yield function, None


def _analyze(project: _Project, module: _Module) -> tuple[list[Finding], int]:
    findings: dict[tuple[int, str], Finding] = {}
    handlers = 0
    for function, self_class in _handlers(module):
        handlers += 1
        walker = _Walker(project, module, function, self_class)
        walker.walk_body()
        for effect, node in walker.found:
            line = getattr(node, "lineno", 0)
            if (line, effect.code) in findings or effect.code not in project.selected:
                continue
            text = module.lines[line - 1] if 0 < line <= len(module.lines) else ""
            if _noqa(text, effect.code):
                continue
            rule = CODES[effect.code]
            findings[(line, effect.code)] = Finding(
                module.path,
                line,
                getattr(node, "col_offset", 0) + 1,
                effect.code,
                f"{rule.kind}: {effect.what} in handler {function.name}()",
            )
    return list(findings.values()), handlers


def _python_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield Path(folder) / name
        else:
            yield path


def lint_paths(paths: Sequence[Path], *, select: Iterable[str] | None = None) -> LintResult:
    """Lint files and directories (recursively, `*.py`). Missing paths raise FileNotFoundError.

    `select` names the codes reported (default: every code but those off by default, PT006)."""
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(str(path))
    files: dict[str, Path] = {}
    sources: list[tuple[Path, str]] = []
    findings: list[Finding] = []
    lines = 0
    for path in _python_files(paths):
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as err:
            findings.append(Finding(str(path), 1, 1, PARSE_ERROR, f"cannot read the file: {err.strerror}"))
            continue
        lines += text.count("\n")
        sources.append((path, text))
        files.setdefault(_module_name(path), path)
    selected = frozenset(select) if select is not None else DEFAULT_CODES
    project = _Project(files, selected | {PARSE_ERROR})
    handlers = 0
    for path, text in sources:
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as err:
            findings.append(
                Finding(
                    str(path),
                    err.lineno or 1,
                    err.offset or 1,
                    PARSE_ERROR,
                    f"{CODES[PARSE_ERROR].kind}: {err.msg}; the file was not checked",
                )
            )
            continue
        except ValueError as err:  # null bytes
            findings.append(Finding(str(path), 1, 1, PARSE_ERROR, f"{CODES[PARSE_ERROR].kind}: {err}"))
            continue
        if "restate" not in text:
            continue  # cannot register a handler; read again only if a handler's import reaches it
        name = _module_name(path)
        module = _index(name, str(path), tree, text)
        if files.get(name) == path:
            project.add(module)
        found, count = _analyze(project, module)
        findings.extend(found)
        handlers += count
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code))
    return LintResult(tuple(findings), len(sources), lines, handlers)


def lint_source(source: str, path: str = "<source>", *, select: Iterable[str] | None = None) -> list[Finding]:
    """Lint one module's source text (no other module is resolved); `select` as for `lint_paths`."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as err:
        return [
            Finding(
                path, err.lineno or 1, err.offset or 1, PARSE_ERROR, f"{CODES[PARSE_ERROR].kind}: {err.msg}"
            )
        ]
    module = _index(Path(path).stem, path, tree, source)
    project = _Project({}, frozenset(select) if select is not None else DEFAULT_CODES)
    project.add(module)
    return sorted(_analyze(project, module)[0], key=lambda f: (f.line, f.col, f.code))
