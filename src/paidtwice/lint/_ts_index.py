"""Read a TypeScript file into what lint needs: its tree, its imports, its functions and its constants.

The parser is tree-sitter's TypeScript grammar through tree-sitter's Python bindings (`tree-sitter` and
`tree-sitter-typescript`, pinned in pyproject.toml). Both are wheels on PyPI with the grammar compiled in, so
lint reads TypeScript in the same Python process that reads Python, with nothing else installed: no Node, no
npm packages in the linted project, no subprocess per file. The grammar is TypeScript's own syntax (types,
generics, decorators, `satisfies`, TSX), and it keeps going past a syntax error, which lint reports (PT000)
instead of checking the file.

Names are qualified by the module they come from: `import * as restate from "@restatedev/restate-sdk"` makes
`restate.service` `@restatedev/restate-sdk.service`; `import OpenAI from "openai"` makes `OpenAI`
`openai.default`; a name not imported is a global (`fetch`, `Date.now`). `node:fs` is `fs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter
import tree_sitter_typescript

from paidtwice.lint._ts_rules import TS_SUFFIXES

__all__ = [
    "FUNCTION_TYPES",
    "Node",
    "TsModule",
    "TsProject",
    "arguments",
    "call_name",
    "function_body",
    "parameters",
    "parse_error",
    "property_value",
    "text",
]

Node = tree_sitter.Node

FUNCTION_TYPES = {"arrow_function", "function_expression", "function_declaration", "method_definition"}

_TYPESCRIPT = tree_sitter.Language(tree_sitter_typescript.language_typescript())
_TSX = tree_sitter.Language(tree_sitter_typescript.language_tsx())


def text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", errors="replace")


def parse_error(root: Node) -> Node | None:
    """The first node the grammar could not read (an ERROR, or a token it had to assume), if any."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return root


def _module_name(specifier: str) -> str:
    return specifier.removeprefix("node:")


def property_value(obj: Node | None, key: str) -> Node | None:
    """The value of `key` in an object literal: `{key: value}`, or the name itself for `{key}`."""
    if obj is None or obj.type != "object":
        return None
    for child in obj.named_children:
        if child.type == "pair" and text(child.child_by_field_name("key")).strip("\"'") == key:
            return child.child_by_field_name("value")
        if child.type == "shorthand_property_identifier" and text(child) == key:
            return child
    return None


def arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [] if args is None else [a for a in args.named_children if a.type != "comment"]


def parameters(function: Node) -> list[Node]:
    """The parameters' patterns (an identifier, or a destructuring), in order."""
    single = function.child_by_field_name("parameter")
    if single is not None:  # `x => ...`
        return [single]
    params = function.child_by_field_name("parameters")
    found = []
    for param in params.named_children if params is not None else []:
        pattern = param.child_by_field_name("pattern")
        if pattern is not None:
            found.append(pattern)
    return found


def parameter_types(function: Node) -> list[str]:
    """The parameters' type annotations as written ("" where none)."""
    params = function.child_by_field_name("parameters")
    return [
        text(param.child_by_field_name("type"))
        for param in (params.named_children if params is not None else [])
        if param.child_by_field_name("pattern") is not None
    ]


def function_body(function: Node) -> Node | None:
    return function.child_by_field_name("body")


def call_name(callee: Node) -> tuple[Node, list[str]]:
    """`a.b.c` -> (a, ["b", "c"]); optional chaining (`a?.b`) read as `a.b`."""
    chain: list[str] = []
    node = callee
    while node.type in ("member_expression", "non_null_expression", "parenthesized_expression"):
        if node.type == "member_expression":
            chain.append(text(node.child_by_field_name("property")))
            inner = node.child_by_field_name("object")
        else:
            inner = node.named_children[0] if node.named_children else None
        if inner is None:
            break
        node = inner
    return node, list(reversed(chain))


@dataclass
class TsModule:
    """One TypeScript file, indexed."""

    path: Path
    """The file."""
    source: bytes
    """Its bytes (tree-sitter's positions are byte offsets)."""
    root: Node
    """The tree."""
    imports: dict[str, str] = field(default_factory=dict)
    """Local name -> qualified name (`restate` -> `@restatedev/restate-sdk`, `llm` -> `./llm.default`)."""
    functions: dict[str, Node] = field(default_factory=dict)
    """Module-level functions by name: declarations and constants bound to an arrow or function expression."""
    constants: dict[str, Node] = field(default_factory=dict)
    """Module-level constants' initializers by name (other than functions)."""
    exports: dict[str, str] = field(default_factory=dict)
    """Exported name (`default` included) -> the local name it exports."""

    @property
    def lines(self) -> list[str]:
        return self.source.decode("utf-8", errors="replace").splitlines()

    def qualify(self, node: Node, local: set[str] | frozenset[str] = frozenset()) -> str | None:
        """The qualified name of an identifier or a member chain on one; None for anything else, and for a
        name bound in the function being read (`local`), which may shadow a global."""
        base, chain = call_name(node)
        if base.type not in ("identifier", "this"):
            return None
        name = text(base)
        if name in local:
            return None
        head = self.imports.get(name, name)
        return ".".join([head, *chain])

    def index(self) -> TsModule:
        for statement in self.root.named_children:
            self._statement(statement)
        return self

    def _statement(self, statement: Node) -> None:
        if statement.type == "import_statement":
            self._import(statement)
        elif statement.type == "export_statement":
            declaration = statement.child_by_field_name("declaration")
            value = statement.child_by_field_name("value")
            default = any(c.type == "default" for c in statement.children)
            if declaration is not None:
                for name in self._declare(declaration):
                    self.exports["default" if default else name] = name
            elif value is not None and default:
                if value.type == "identifier":
                    self.exports["default"] = text(value)
                elif value.type in FUNCTION_TYPES:
                    self.functions["default"] = value
                    self.exports["default"] = "default"
            for clause in statement.named_children:
                if clause.type == "export_clause":
                    for spec in clause.named_children:
                        name = text(spec.child_by_field_name("name"))
                        alias = spec.child_by_field_name("alias")
                        self.exports[text(alias) if alias is not None else name] = name
        else:
            self._declare(statement)

    def _declare(self, declaration: Node) -> list[str]:
        if declaration.type == "function_declaration":
            name = text(declaration.child_by_field_name("name"))
            self.functions[name] = declaration
            return [name]
        names = []
        if declaration.type in ("lexical_declaration", "variable_declaration"):
            for declarator in declaration.named_children:
                if declarator.type != "variable_declarator":
                    continue
                target = declarator.child_by_field_name("name")
                value = declarator.child_by_field_name("value")
                if target is None or target.type != "identifier" or value is None:
                    continue
                name = text(target)
                names.append(name)
                if value.type in ("arrow_function", "function_expression"):
                    self.functions[name] = value
                else:
                    self.constants[name] = value
        return names

    def _import(self, statement: Node) -> None:
        source = statement.child_by_field_name("source")
        clause = next((c for c in statement.named_children if c.type == "import_clause"), None)
        if source is None or clause is None:
            return
        module = _module_name(text(source).strip("\"'`"))
        for part in clause.named_children:
            if part.type == "identifier":
                self.imports[text(part)] = f"{module}.default"
            elif part.type == "namespace_import":
                for local in part.named_children:
                    self.imports[text(local)] = module
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = text(spec.child_by_field_name("name"))
                    alias = spec.child_by_field_name("alias")
                    self.imports[text(alias) if alias is not None else name] = f"{module}.{name}"


def _parser_for(path: Path) -> tree_sitter.Parser:
    return tree_sitter.Parser(_TSX if path.suffix == ".tsx" else _TYPESCRIPT)


def parse_module(path: Path, source: bytes) -> TsModule:
    return TsModule(path, source, _parser_for(path).parse(source).root_node).index()


class TsProject:
    """The TypeScript files lint reads, and the files beside them their relative imports name."""

    def __init__(self) -> None:
        self._modules: dict[Path, TsModule | None] = {}

    def add(self, module: TsModule) -> None:
        self._modules.setdefault(module.path.resolve(), module)

    def module_of(self, importer: TsModule, specifier: str) -> TsModule | None:
        """The module a relative import names (`./utils/llm`, `./llm.js`), parsed on first use."""
        if not specifier.startswith("."):
            return None
        base = (importer.path.parent / specifier).resolve()
        stem = base.with_suffix("") if base.suffix in (".js", ".mjs", ".cjs", ".jsx") else base
        candidates = [base] if base.suffix in TS_SUFFIXES else []
        candidates += [stem.with_name(stem.name + s) for s in TS_SUFFIXES]
        candidates += [base / f"index{s}" for s in TS_SUFFIXES]
        for candidate in candidates:
            if candidate in self._modules:
                return self._modules[candidate]
            if candidate.is_file():
                try:
                    source = candidate.read_bytes()
                except OSError:
                    continue
                module = parse_module(candidate, source)
                self._modules[candidate] = None if parse_error(module.root) else module
                return self._modules[candidate]
        return None

    def resolve(self, module: TsModule, qualified: str) -> tuple[TsModule, str] | None:
        """The module and local name an imported relative name stands for (`./llm.default` -> llm.ts's
        `llmCall`), following re-exports a few steps."""
        for _step in range(5):
            specifier, _dot, name = qualified.rpartition(".")
            target = self.module_of(module, specifier) if specifier else None
            if target is None:
                return None
            local = target.exports.get(name)
            if local is None:
                return None
            if local in target.functions or local in target.constants:
                return target, local
            if local in target.imports:
                module, qualified = target, target.imports[local]
                continue
            return None
        return None
