"""What lint knows of the linted tree without running it: each module's imports, functions, classes (their
methods, and what their methods assign to `self`), instances of known clients and Restate services; and how a
name in a function resolves against that (`Scope`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from paidtwice.lint._rules import (
    ADK_APP,
    ADK_APP_CLASSES,
    ADK_APP_JOURNALED,
    ADK_RESTATE_PLUGINS,
    ADK_RUNNER,
    ADK_RUNNER_CLASSES,
    ADK_RUNNER_JOURNALED,
    AGENT_CLASSES,
    AGENT_WITH_MODEL,
    CHAT_MODEL,
    CLIENT_CLASSES,
    LANGCHAIN_AGENT,
    LANGCHAIN_AGENT_MAKERS,
    LANGCHAIN_CHAIN,
    RESTATE_CONTEXT,
    RESTATE_MIDDLEWARE,
    RUN_CONFIG_CLASSES,
    RUN_CONFIG_WITH_MODEL,
    adk_undecided,
    adk_undecided_why,
    context_getter,
    derived_model,
    model_class,
)

__all__ = [
    "ClassInfo",
    "Effect",
    "FunctionNode",
    "ModuleInfo",
    "Scope",
    "attr_chain",
    "dotted_name",
    "index_module",
]

_SERVICE_CLASSES = {"Service", "VirtualObject", "Workflow"}

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Effect:
    """One call a replay makes again, where it is made."""

    code: str
    """Rule code, see `CODES`."""
    what: str
    """The call, qualified: `httpx.AsyncClient.post`."""
    path: str
    """The file that makes the call."""
    line: int
    """Its line there."""


@dataclass(frozen=True)
class ClassInfo:
    """A class of the linted tree; `attributes` is filled while its module is indexed."""

    name: str
    """Its name in its module."""
    qualified: str
    """`module.Class`."""
    methods: dict[str, FunctionNode]
    """Its methods by name."""
    attributes: dict[str, str] = field(default_factory=dict)
    """self.<name> -> qualified class of what was assigned to it."""


@dataclass(frozen=True)
class ModuleInfo:
    """A module of the linted tree; its tables are filled by `index_module`."""

    name: str
    """Dotted name."""
    path: str
    """The file."""
    tree: ast.Module
    """Its syntax tree."""
    lines: list[str]
    """Its source lines, for `# noqa`."""
    imports: dict[str, str] = field(default_factory=dict)
    """Local name -> what it imports, qualified."""
    functions: dict[str, FunctionNode] = field(default_factory=dict)
    """Its top-level functions by name."""
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    """Its classes by name."""
    instances: dict[str, str] = field(default_factory=dict)
    """Module-level name -> the class of the instance it holds (known clients, in-tree classes)."""
    services: set[str] = field(default_factory=set)
    """Module-level names holding a Restate Service, VirtualObject or Workflow."""


def dotted_name(path: Path) -> str:
    """Dotted name from the topmost directory that is a package down to the file."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


def attr_chain(node: ast.expr) -> tuple[ast.expr, list[str]]:
    """`a.b.c` -> (Name a, ["b", "c"])."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    return node, attrs


def _relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def index_module(name: str, path: str, tree: ast.Module, text: str) -> ModuleInfo:
    module = ModuleInfo(name, path, tree, text.splitlines())
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
            module.classes[statement.name] = ClassInfo(statement.name, f"{name}.{statement.name}", methods)
    scope = Scope(module, {})
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
        if (
            isinstance(value, ast.Call)
            and scope.qualify(value.func) == "restate._preview.explicit_recovery"
            and value.args
        ):
            value = value.args[0]  # svc = explicit_recovery(restate.Service(...)): the service itself
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


class Scope:
    """Resolves names in one function (its locals over the module's names)."""

    def __init__(self, module: ModuleInfo, local_instances: dict[str, str]) -> None:
        self.module = module
        self.local_instances = local_instances
        self.local_functions: dict[str, FunctionNode] = {}
        self._factories: set[str] = set()
        """Factories being read, against a factory that calls itself."""

    def qualify(self, node: ast.expr) -> str | None:
        """`h.post` with `import httpx as h` -> "httpx.post"; None when not a dotted name."""
        base, attrs = attr_chain(node)
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
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
            return self._chain(value)
        if not isinstance(value, ast.Call):
            return None
        qualified = self.qualify(value.func)
        if qualified is None:
            # model.bind_tools(...), ChatOpenAI(...).bind_tools(...): another chat model.
            base, attrs = attr_chain(value.func)
            made = self.constructed(base) if isinstance(base, ast.Call) else self.instance(base)
            return made if made is not None and derived_model(made, attrs) else None
        if qualified in LANGCHAIN_AGENT_MAKERS:
            return None if self._restate_middleware(value) else LANGCHAIN_AGENT
        if context_getter(qualified):
            return RESTATE_CONTEXT
        if qualified in ADK_RUNNER_CLASSES | ADK_APP_CLASSES:
            return self._adk(value, runner=qualified in ADK_RUNNER_CLASSES)
        if qualified in CLIENT_CLASSES:
            return qualified
        made = model_class(qualified)
        if made is not None:
            return made
        if qualified in AGENT_CLASSES | RUN_CONFIG_CLASSES:
            if not self._model_instance(value):
                return qualified
            return AGENT_WITH_MODEL if qualified in AGENT_CLASSES else RUN_CONFIG_WITH_MODEL
        factory = self._factory(qualified)
        if factory is not None:
            return factory
        if qualified.startswith("restate.") and qualified.rsplit(".", 1)[-1] in _SERVICE_CLASSES:
            return "restate." + qualified.rsplit(".", 1)[-1]
        if qualified in {"random.Random", "random.SystemRandom"}:
            return "random.Random"
        # Something that looks like a class: an in-tree one is resolved where its methods are called.
        return qualified if qualified.rsplit(".", 1)[-1][:1].isupper() else None

    def made(self, node: ast.expr) -> str | None:
        """What an expression holds: an instance made here, or one a name holds."""
        return self.constructed(node) if isinstance(node, ast.Call | ast.BinOp) else self.instance(node)

    def _chain(self, value: ast.BinOp) -> str | None:
        """`prompt | model | parser`: a chain that calls the model when it runs, if a chat model (or an
        agent) is in it."""
        parts = (self.made(value.left), self.made(value.right))
        return LANGCHAIN_CHAIN if {CHAT_MODEL, LANGCHAIN_AGENT, LANGCHAIN_CHAIN} & set(parts) else None

    def _factory(self, qualified: str) -> str | None:
        """What a function of this module returns, when it returns a known client: `get_model()` that makes
        (and maybe caches) a chat model. Its return statements are read, else its return annotation."""
        module_name, _, name = qualified.rpartition(".")
        function = self.module.functions.get(name) if module_name == self.module.name else None
        if function is None or name in self._factories:
            return None
        self._factories.add(name)  # a factory calling itself, or two calling each other
        try:
            for node in ast.walk(function):
                if isinstance(node, ast.Return) and node.value is not None:
                    made = self.made(node.value)
                    if made in CLIENT_CLASSES:
                        return made
            annotated = self.qualify(function.returns) if function.returns is not None else None
            if annotated is not None and annotated in CLIENT_CLASSES:
                return annotated
            return model_class(annotated) if annotated is not None else None
        finally:
            self._factories.discard(name)

    def _model_instance(self, call: ast.Call) -> bool:
        """Agent(..., model=X) or RunConfig(model=X), X a model object, not a name for the provider."""
        for keyword in call.keywords:
            if keyword.arg == "model":
                return isinstance(keyword.value, ast.Call) or self.instance(keyword.value) is not None
        return False

    def instance(self, node: ast.expr) -> str | None:
        """The class of the instance a bare name holds (a local one first), if known."""
        if not isinstance(node, ast.Name):
            return None
        return self.local_instances.get(node.id) or self.module.instances.get(node.id)

    def _adk(self, call: ast.Call, *, runner: bool) -> str:
        """What an ADK `Runner(...)` or `App(...)` is: journaled when Restate's plugin is among its plugins
        (or its app's), not when every plugin is known and none is; undecided otherwise, with why."""
        kind = "Runner" if runner else "App"
        sources: list[ast.expr] = []
        why: list[str] = []
        journaled = False
        for keyword in call.keywords:
            if keyword.arg == "plugins":
                sources.append(keyword.value)
            elif keyword.arg == "app" and runner:
                app = self.made(keyword.value)
                journaled |= app == ADK_APP_JOURNALED
                if app != ADK_APP and app != ADK_APP_JOURNALED:
                    why.append(adk_undecided_why(app) or "its app is made where lint cannot read it")
            elif keyword.arg is None:
                why.append(f"its arguments come from **{ast.unparse(keyword.value)}")
        for source in sources:
            plugins = self._adk_plugins(source)
            if isinstance(plugins, str):
                why.append(plugins)
                continue
            for plugin in plugins:
                made = self.made(plugin)
                if made in ADK_RESTATE_PLUGINS:
                    journaled = True
                elif made is None or not made.startswith("google.adk."):
                    # A plugin of its own (ai-examples' a2a agents bring their own RestatePlugin) may journal.
                    why.append(f"a plugin lint does not know, {made or ast.unparse(plugin)}, may journal")
        if journaled:
            return ADK_RUNNER_JOURNALED if runner else ADK_APP_JOURNALED
        if why:
            return adk_undecided(kind, "; ".join(why))
        return ADK_RUNNER if runner else ADK_APP

    def _adk_plugins(self, source: ast.expr) -> list[ast.expr] | str:
        """The plugins a `plugins=` argument lists: a list or tuple written there, or in a module-level name
        assigned once; else why they cannot be read."""
        if isinstance(source, ast.Constant) and source.value is None:
            return []
        listed = self._listed(source)
        if listed is not None:
            return listed
        if isinstance(source, ast.Name):
            # A module-level list may be added to later: it says yes (Restate's plugin is in it), never no.
            assigned = [
                statement.value
                for statement in self.module.tree.body
                if isinstance(statement, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == source.id for t in statement.targets)
            ]
            listed = self._listed(assigned[0]) if len(assigned) == 1 else None
            if listed is not None and any(self.made(p) in ADK_RESTATE_PLUGINS for p in listed):
                return listed
            return f"its plugins are the list {source.id}, which lint cannot follow"
        return f"its plugins are {ast.unparse(source)}, built where lint cannot read them"

    @staticmethod
    def _listed(source: ast.expr) -> list[ast.expr] | None:
        if not isinstance(source, ast.List | ast.Tuple):
            return None
        return None if any(isinstance(e, ast.Starred) for e in source.elts) else list(source.elts)

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
