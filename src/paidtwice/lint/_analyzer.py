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
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from paidtwice.lint._findings import Finding, LintResult, noqa
from paidtwice.lint._index import FunctionNode, ModuleInfo, Scope, attr_chain, dotted_name, index_module
from paidtwice.lint._parse import NeedsNewerParser, Parser
from paidtwice.lint._rules import (
    ADK_AGENT_CLASSES,
    ADK_FUNCTION_TOOLS,
    CODES,
    DEFAULT_CODES,
    EXPLICIT_RECOVERY,
    PARSE_ERROR,
    PYDANTIC_AGENTS,
    PYDANTIC_TOOL_DECORATORS,
    TOOL_DECORATORS,
)
from paidtwice.lint._ts_rules import TS_SUFFIXES
from paidtwice.lint._walker import Project, Walker

if TYPE_CHECKING:
    from paidtwice.lint._ts_analyzer import TsLint

__all__ = ["lint_paths", "lint_source", "typescript_file"]

_HANDLER_DECORATORS = {"handler", "main"}
_ROLES = {"handler": "handler", "tool": "agent tool"}
"""How a finding names where it is: a handler, or a tool an agent's run calls (again on every replay)."""
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".nox", ".mypy_cache"}


def _explicit_services(module: ModuleInfo) -> set[str]:
    """Services the module puts under `explicit_recovery` unconditionally, at module level:
    `explicit_recovery(svc)`, `svc = explicit_recovery(restate.Service(...))`, `svc.explicit_recovery = True`.
    One applied under an `if` is not counted: whether it applies is decided at run time."""
    scope = Scope(module, {})
    found: set[str] = set()
    for statement in module.tree.body:
        value = statement.value if isinstance(statement, ast.Expr | ast.Assign) else None
        if isinstance(value, ast.Call) and scope.qualify(value.func) == EXPLICIT_RECOVERY and value.args:
            if isinstance(statement, ast.Assign):
                found |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
            if isinstance(value.args[0], ast.Name):
                found.add(value.args[0].id)
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and statement.value.value is True
        ):
            for target in statement.targets:
                if isinstance(target, ast.Attribute) and target.attr == "explicit_recovery":
                    if isinstance(target.value, ast.Name):
                        found.add(target.value.id)
    return found


def _explicit_handler(module: ModuleInfo, function: FunctionNode, services: set[str]) -> bool:
    """The handler runs under explicit_recovery: decorated with it, or registered on a service that is."""
    scope = Scope(module, {})
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if scope.qualify(target) == EXPLICIT_RECOVERY:
            return True
        base, attrs = attr_chain(target)
        if isinstance(base, ast.Name) and attrs and attrs[0] in _HANDLER_DECORATORS and base.id in services:
            return True
    return False


def _handlers(module: ModuleInfo) -> Iterator[tuple[FunctionNode, str | None]]:
    """Every function registered as a Restate handler, with the class it is a method of (if any)."""

    def registered(function: FunctionNode) -> bool:
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            base, attrs = attr_chain(target)
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


def _tools(module: ModuleInfo) -> Iterator[FunctionNode]:
    """Every function the module makes an agent's tool (`@function_tool`, `@tool`, `@agent.tool_plain`),
    except those of a pydantic-ai agent that `RestateAgent(agent, auto_wrap_tools=True)` runs in steps."""
    scope = Scope(module, {})
    wrapped = set()
    listed = _adk_tools(module, scope)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call) and scope.qualify(node.func) == "restate.ext.pydantic.RestateAgent":
            auto = any(
                k.arg == "auto_wrap_tools" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if auto and node.args and isinstance(node.args[0], ast.Name):
                wrapped.add(node.args[0].id)

    def tool(function: FunctionNode) -> bool:
        if function.name in listed:
            return True
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if scope.qualify(target) in TOOL_DECORATORS:
                return True
            base, attrs = attr_chain(target)
            if (
                isinstance(base, ast.Name)
                and attrs in ([name] for name in PYDANTIC_TOOL_DECORATORS)
                and module.instances.get(base.id) in PYDANTIC_AGENTS
                and base.id not in wrapped
            ):
                return True
        return False

    for function in module.functions.values():
        if tool(function):
            yield function


def _adk_tools(module: ModuleInfo, scope: Scope) -> set[str]:
    """The module's functions an ADK agent calls as tools: named in `Agent(tools=[...])` (or `LlmAgent`), or
    wrapped in `FunctionTool(f)`. Restate's plugin journals the model's answers, not the tools: a tool runs
    again on every replay that reaches it."""
    named: set[str] = set()
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        made = scope.qualify(node.func)
        items: list[ast.expr] = []
        if made in ADK_AGENT_CLASSES:
            for keyword in node.keywords:
                if keyword.arg == "tools" and isinstance(keyword.value, ast.List | ast.Tuple):
                    items = list(keyword.value.elts)
        elif made in ADK_FUNCTION_TOOLS:
            items = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "func")]
        named |= {i.id for i in items if isinstance(i, ast.Name) and i.id in module.functions}
    return named


def _analyze(
    project: Project, module: ModuleInfo, undecided: list[tuple[str, int, str]] | None = None
) -> tuple[list[Finding], int]:
    """The module's findings and its number of handlers; what lint cannot decide goes to `undecided`."""
    findings: dict[tuple[int, str], Finding] = {}
    handlers = 0
    roots = [(f, c, "handler") for f, c in _handlers(module)] + [(f, None, "tool") for f in _tools(module)]
    explicit = _explicit_services(module)
    for function, self_class, role in roots:
        handlers += role == "handler"
        walker = Walker(project, module, function, self_class)
        walker.explicit_recovery = role == "handler" and _explicit_handler(module, function, explicit)
        walker.walk_body()
        for why, node in walker.undecided:
            entry = (module.path, getattr(node, "lineno", 0), f"cannot decide whether {why}")
            if undecided is not None and entry not in undecided:
                undecided.append(entry)
        for effect, node in walker.found:
            line = getattr(node, "lineno", 0)
            if (line, effect.code) in findings or effect.code not in project.selected:
                continue
            text = module.lines[line - 1] if 0 < line <= len(module.lines) else ""
            if noqa(text, effect.code):
                continue
            rule = CODES[effect.code]
            findings[(line, effect.code)] = Finding(
                module.path,
                line,
                getattr(node, "col_offset", 0) + 1,
                effect.code,
                f"{rule.kind}: {effect.what} in {_ROLES[role]} {function.name}()",
            )
    return list(findings.values()), handlers


def _typescript(selected: frozenset[str]) -> TsLint | str:
    """The TypeScript linter; or, when its parser is not installed, why its files are not checked."""
    try:
        from paidtwice.lint._ts_analyzer import TsLint
    except ImportError as err:
        return (
            f"not checked: reading TypeScript needs {err.name} (pip install tree-sitter==0.26.1 "
            "tree-sitter-typescript==0.23.2, paidtwice's own dependencies)"
        )
    return TsLint(selected)


def typescript_file(path: Path) -> bool:
    """A TypeScript source file (`.ts`, `.tsx`, `.mts`, `.cts`; not a `.d.ts` declaration file)."""
    return path.name.endswith(TS_SUFFIXES) and not path.name.endswith((".d.ts", ".d.mts", ".d.cts"))


def _source_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py") or typescript_file(Path(name)):
                        yield Path(folder) / name
        else:
            yield path


def lint_paths(
    paths: Sequence[Path], *, select: Iterable[str] | None = None, parser: Parser | None = None
) -> LintResult:
    """Lint files and directories (recursively, `*.py` and TypeScript's `*.ts`, `*.tsx`, `*.mts`, `*.cts`).
    Missing paths raise FileNotFoundError.

    `select` names the codes reported (default: every code but those off by default, PT006). `parser`
    parses as the project's Python (default: the running one's grammar, then any newer python3.N on PATH)."""
    parser = parser or Parser()
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(str(path))
    files: dict[str, Path] = {}
    sources: list[tuple[Path, str]] = []
    findings: list[Finding] = []
    lines = 0
    selected = frozenset(select) if select is not None else DEFAULT_CODES
    typescript: TsLint | str | None = None
    unchecked: list[tuple[str, str]] = []
    read = 0
    for path in _source_files(paths):
        try:
            data = path.read_bytes()
        except OSError as err:
            findings.append(Finding(str(path), 1, 1, PARSE_ERROR, f"cannot read the file: {err.strerror}"))
            continue
        read += 1
        lines += data.count(b"\n")
        if typescript_file(path):
            typescript = typescript or _typescript(selected)
            if isinstance(typescript, str):
                unchecked.append((str(path), typescript))
            else:
                findings.extend(typescript.lint(path, data))
            continue
        text = data.decode("utf-8", errors="replace")
        sources.append((path, text))
        files.setdefault(dotted_name(path), path)
    project = Project(files, selected | {PARSE_ERROR}, parser)
    handlers = 0
    undecided: list[tuple[str, int, str]] = []
    if typescript is not None and not isinstance(typescript, str):
        handlers, undecided = typescript.handlers, list(typescript.undecided)
    for path, text in sources:
        try:
            tree = parser.parse(text, str(path))
        except NeedsNewerParser as err:
            unchecked.append((str(path), str(err)))
            continue
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
        name = dotted_name(path)
        module = index_module(name, str(path), tree, text)
        if files.get(name) == path:
            project.add(module)
        found, count = _analyze(project, module, undecided)
        findings.extend(found)
        handlers += count
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code))
    return LintResult(tuple(findings), read, lines, handlers, tuple(unchecked), tuple(undecided))


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
    module = index_module(Path(path).stem, path, tree, source)
    project = Project({}, frozenset(select) if select is not None else DEFAULT_CODES)
    project.add(module)
    return sorted(_analyze(project, module)[0], key=lambda f: (f.line, f.col, f.code))
