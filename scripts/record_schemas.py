"""Write the JSON Schemas of paidtwice's records (docs/reference/schemas/), from the record types themselves.

.venv/bin/python scripts/record_schemas.py

Each record is a frozen dataclass with a docstring under every field; its schema is made from the field's
type (int, float, str, bool, None, unions, tuples, lists, dicts, Literal, nested dataclasses) and its
docstring. A field that may be None may also be absent (a run's `expected` drops the figures a row leaves
open), and a field with a default may be absent (records written before it was added). Unknown fields are
refused, so a record type that gains a field needs its schema made again: tests/docs/ checks the files here
equal what this script makes today, and validates real records against them.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "reference" / "schemas"
BASE = "https://paidtwice.invalid/schemas/"


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass, read from its source."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body[0]
        assert isinstance(body, ast.ClassDef)
        statements = body.body
        for node, after in zip(statements, [*statements[1:], None], strict=True):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def tags(kind: str) -> dict[str, Any]:
    """The results format and the record's kind, which every record carries first."""
    from paidtwice.results import RESULTS_FORMAT

    return {
        "format": {"description": "The results format.", "const": RESULTS_FORMAT},
        "record": {"description": "What the record is.", "const": kind},
    }


class Builder:
    """Schemas of dataclasses, each once under $defs, referred to by name."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def type_schema(self, hint: Any) -> dict[str, Any]:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is type(None) or hint is None:
            return {"type": "null"}
        if hint is Any or hint is object:
            return {}
        if hint is bool:
            return {"type": "boolean"}
        if hint is int:
            return {"type": "integer"}
        if hint is float:
            return {"type": "number"}
        if hint is str or hint is Path:
            return {"type": "string"}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.type_schema(a) for a in args]}
        if origin in (tuple, list, typing.Sequence) or hint in (tuple, list):
            if origin is tuple and args and args[-1] is not Ellipsis:
                return {"type": "array", "prefixItems": [self.type_schema(a) for a in args], "items": False}
            return {"type": "array", "items": self.type_schema(args[0]) if args else {}}
        if origin in (dict, typing.Mapping) or hint is dict:
            value = self.type_schema(args[1]) if len(args) == 2 else {}
            return {"type": "object", "additionalProperties": value}
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            return {"$ref": f"#/$defs/{self.dataclass_def(hint)}"}
        if isinstance(hint, type) and issubclass(hint, str):
            return {"type": "string"}
        if isinstance(hint, typing.TypeAliasType):
            return self.type_schema(hint.__value__)
        raise TypeError(f"no JSON Schema for {hint!r}")

    def dataclass_def(self, cls: type) -> str:
        name = cls.__name__
        if name in self.defs:
            return name
        self.defs[name] = {}  # recursion guard
        from paidtwice.results import kinds

        kind = next((k.name for k in kinds() if k.cls is cls), None)
        # A record nested in another (a curve's runs, a walk's stuck run) is written tagged too.
        self.defs[name] = self.object_schema(cls, tags(kind) if kind else None)
        return name

    def object_schema(self, cls: type, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        docs = field_docs(cls)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            schema = self.type_schema(hint)
            if field.name in docs:
                schema = {"description": docs[field.name], **schema}
            properties[field.name] = schema
            optional = type(None) in typing.get_args(hint)
            has_default = (
                field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            )
            if not optional and not has_default:
                required.append(field.name)
        properties.update(extra or {})
        doc = inspect.cleandoc(cls.__doc__ or "")
        out: dict[str, Any] = {"type": "object"}
        if doc and not doc.startswith(f"{cls.__name__}("):
            out["description"] = " ".join(doc.split("\n\n")[0].split())
        out.update({"properties": properties, "required": required, "additionalProperties": False})
        return out

    def record(self, cls: type, kind: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tagged record: the results format and its kind, then the dataclass's fields."""
        schema = self.object_schema(cls, {**tags(kind), **(extra or {})})
        schema["required"] = ["format", "record", *schema["required"]]
        return schema


def document(name: str, title: str, schema: dict[str, Any], builder: Builder) -> dict[str, Any]:
    out = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": BASE + f"{name}.schema.json",
        "title": title,
        **schema,
    }
    if builder.defs:
        out["$defs"] = dict(sorted(builder.defs.items()))
    return out


def schemas() -> dict[str, dict[str, Any]]:
    """Every schema, by file name."""
    sys.path.insert(0, str(ROOT / "src"))
    from paidtwice.replay._journal import FORMAT as JOURNAL_FORMAT
    from paidtwice.results import groups, kinds

    # The schema file each group of record kinds is described in, and its title.
    documents = {group.name: (group.schema, group.title) for group in groups()}

    out: dict[str, dict[str, Any]] = {}
    builders: dict[str, Builder] = {}
    records: dict[str, list[dict[str, Any]]] = {}
    for kind in kinds():
        name = documents[kind.group][0]
        builder = builders.setdefault(name, Builder())
        records.setdefault(name, []).append(builder.record(kind.cls, kind.name, kind.derived_schema))
    for group, (name, title) in documents.items():
        if name in out:
            continue  # two groups in one file (a deck's records and a sweep's points)
        (one, *more) = records[name]
        whole_file = any(kind.whole_file for kind in kinds() if kind.group == group)
        body = one if whole_file else {"type": "array", "items": {"oneOf": [one, *more]} if more else one}
        out[name] = document(name, title, body, builders[name])

    nullable = {"type": ["string", "null"]}
    out["journal"] = document(
        "journal",
        "paidtwice journal file",
        {
            "type": "object",
            "properties": {
                "format": {"const": JOURNAL_FORMAT},
                "version": {"const": 1},
                "invocation_id": {"type": "string"},
                "service": {"type": "string"},
                "handler": {"type": "string"},
                "key": nullable,
                "protocol_version": {
                    "description": "The invocation's pinned service protocol version.",
                    "type": "integer",
                },
                "status": {"description": "The invocation's status when captured.", "type": "string"},
                "deployment_id": nullable,
                "random_seed": {
                    "description": "StartMessage.random_seed as a decimal string, or null when unknown.",
                    "type": ["string", "null"],
                    "pattern": "^[0-9]+$",
                },
                "random_seed_source": {"type": "string"},
                "captured_from": {"type": "string"},
                "captured_at": {"type": "string"},
                "entries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "index": {"type": "integer", "minimum": 0},
                            "type": {"description": 'The entry\'s kind, "Command: Run".', "type": "string"},
                            "name": {"type": "string"},
                            "appended_at": {"type": ["string", "null"]},
                            "raw": {
                                "description": "sys_journal.raw: the entry's protobuf body, in base64.",
                                "type": "string",
                                "contentEncoding": "base64",
                            },
                        },
                        "required": ["index", "type", "raw"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["format", "version", "invocation_id", "service", "handler", "entries"],
            "additionalProperties": False,
        },
        Builder(),
    )
    return out


def rendered() -> dict[Path, str]:
    """Each schema file's text."""
    return {SCHEMAS / f"{name}.schema.json": json.dumps(s, indent=2) + "\n" for name, s in schemas().items()}


def main() -> None:
    SCHEMAS.mkdir(parents=True, exist_ok=True)
    for path, text in rendered().items():
        path.write_text(text)
        print(path)


if __name__ == "__main__":
    main()
