"""The TypeScript conformance corpus (tests/conformance/ts_apps) covers @restatedev/restate-sdk's handler API:
every member of the handler contexts and of what they hand back (a durable promise, a Restate promise, an
invocation's reference, rand and date), every field of the service, object and workflow definitions, of their
options and their handlers' options, of a step's RunOptions and of a RetryPolicy, read from the installed
SDK's declarations (.d.ts) with tree-sitter. An SDK upgrade that adds one fails here until a corpus app uses
it. The uses are read from the apps' source with the same parser. docs/reference/conformance.md ends with
this test's table: `python tests/conformance/test_ts_corpus_coverage.py` writes it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import tree_sitter
import tree_sitter_typescript

ROOT = Path(__file__).resolve().parents[2]
APPS = Path(__file__).resolve().parent / "ts_apps"
SDK = APPS / "node_modules" / "@restatedev" / "restate-sdk"
PAGE = ROOT / "docs" / "reference" / "conformance.md"
HEADING = "## TypeScript: @restatedev/restate-sdk"

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_typescript.language_typescript()))

#: The handler contexts, in the order a member is said to belong to (the first that declares it); an
#: object's state methods are declared by KeyValueStore, which ObjectContext extends.
CONTEXTS = (
    ("Context", "Context"),
    ("ObjectSharedContext", "ObjectSharedContext"),
    ("ObjectContext", "ObjectContext"),
    ("KeyValueStore", "ObjectContext"),
    ("WorkflowSharedContext", "WorkflowSharedContext"),
    ("WorkflowContext", "WorkflowContext"),
)
#: What the contexts hand back, whose members a corpus app may call on any name holding one.
RETURNED = (
    "Rand",
    "ContextDate",
    "RestatePromise",
    "DurablePromise",
    "InvocationReference",
    "SignalReference",
)
#: The definition functions, and the option types of each and of its handlers, by the call that takes them.
DEFINITIONS = ("service", "object", "workflow")
OPTIONS = {"service": "ServiceOptions", "object": "ObjectOptions", "workflow": "WorkflowOptions"}
HANDLER_OPTIONS = {
    "handlers.handler": "ServiceHandlerOpts",
    "handlers.object.exclusive": "ObjectHandlerOpts",
    "handlers.object.shared": "ObjectHandlerOpts",
    "handlers.workflow.workflow": "WorkflowHandlerOpts",
    "handlers.workflow.shared": "WorkflowHandlerOpts",
}
#: Option types an app may write anywhere as a literal of that type (a policy a helper returns).
TYPED = ("RunOptions", "RetryPolicy")


def _text(node: tree_sitter.Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode()


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _declarations(path: Path) -> dict[str, tree_sitter.Node]:
    """Each interface, type alias and declared constant of a .d.ts, by name."""
    root = _PARSER.parse(path.read_bytes()).root_node
    found: dict[str, tree_sitter.Node] = {}
    for node in _walk(root):
        if node.type in ("interface_declaration", "type_alias_declaration", "variable_declarator"):
            found.setdefault(_text(node.child_by_field_name("name")), node)
    return found


def _members(name: str, declared: dict[str, tree_sitter.Node]) -> list[tuple[str, bool]]:
    """The members a declaration lists itself (and through the same file's types it intersects), in order:
    (name, whether it is a method). An interface's `extends` are not followed: each context is read alone."""
    node = declared[name]
    bodies: list[tree_sitter.Node | None]
    if node.type == "interface_declaration":
        bodies = [node.child_by_field_name("body")]
    elif node.type == "type_alias_declaration":
        value = node.child_by_field_name("value")
        bodies = [value] if value is None or value.type != "intersection_type" else [*value.named_children]
    else:  # a declared function: the fields of the object its parameter is
        bodies = [next((n for n in _walk(node) if n.type == "object_type"), None)]
    members: list[tuple[str, bool]] = []
    for body in bodies:
        if body is None:
            continue
        referred = _text(body.child_by_field_name("name") if body.type == "generic_type" else body)
        if body.type in ("type_identifier", "generic_type") and referred in declared:
            members += [m for m in _members(referred, declared) if m not in members]
        for part in body.named_children if body.type in ("object_type", "interface_body") else []:
            if part.type in ("property_signature", "method_signature"):
                member = (_text(part.child_by_field_name("name")), part.type == "method_signature")
                if member not in members:
                    members.append(member)
    return members


def _item(owner: str, member: str, method: bool) -> str:
    return f"{owner}.{member}()" if method else f"{owner}.{member}"


def sdk_api() -> list[str]:
    """Every member and option of the installed SDK the corpus must use: `Context.run()` (a method),
    `Context.rand` (a property), `restate.service(name)` (a definition's field), `ServiceOptions.serde`."""
    dist = SDK / "dist"
    context = _declarations(dist / "context.d.ts")
    rpc = _declarations(dist / "types" / "rpc.d.ts")
    owned: dict[str, str] = {}
    items: list[str] = []
    for declared, owner in CONTEXTS:
        for member, method in _members(declared, context):
            if member not in owned:
                owned[member] = owner
                items.append(_item(owner, member, method))
    items += [_item(owner, m, method) for owner in RETURNED for m, method in _members(owner, context)]
    for definition in DEFINITIONS:
        items += [f"restate.{definition}({field})" for field, _ in _members(definition, rpc)]
    for options in [*OPTIONS.values(), *dict.fromkeys(HANDLER_OPTIONS.values()), "RetryPolicy"]:
        items += [f"{options}.{field}" for field, _ in _members(options, rpc)]
    items += [f"RunOptions.{field}" for field, _ in _members("RunOptions", context)]
    return items


def _keys(literal: tree_sitter.Node | None) -> dict[str, tree_sitter.Node]:
    """An object literal's keys and their values (a shorthand `{ forget }` too)."""
    if literal is None or literal.type != "object":
        return {}
    keys: dict[str, tree_sitter.Node] = {}
    for child in literal.named_children:
        if child.type == "pair":
            keys[_text(child.child_by_field_name("key"))] = child.child_by_field_name("value") or child
        elif child.type == "shorthand_property_identifier":
            keys[_text(child)] = child
    return keys


def _arguments(call: tree_sitter.Node) -> list[tree_sitter.Node]:
    arguments = call.child_by_field_name("arguments")
    return [] if arguments is None else list(arguments.named_children)


def _context_names(root: tree_sitter.Node) -> set[str]:
    """The parameters typed as a handler context (`ctx: restate.ObjectContext`)."""
    names: set[str] = set()
    for node in _walk(root):
        if node.type in ("required_parameter", "optional_parameter"):
            annotation = _text(node.child_by_field_name("type")).lstrip(": ").split("<")[0]
            if annotation.endswith("Context"):
                names.add(_text(node.child_by_field_name("pattern")))
    return names


def _uses(source: bytes) -> Iterator[str]:
    root = _PARSER.parse(source).root_node
    contexts = _context_names(root)
    for node in _walk(root):
        if node.type == "member_expression":
            member = _text(node.child_by_field_name("property"))
            receiver = node.child_by_field_name("object")
            if receiver is not None and receiver.type == "identifier" and _text(receiver) in contexts:
                yield f"Context.{member}"
            yield f"*.{member}"
        elif node.type == "call_expression":
            called = _text(node.child_by_field_name("function")).removeprefix("restate.")
            arguments = _arguments(node)
            first = _keys(arguments[0]) if arguments else {}
            if called in DEFINITIONS:
                yield from (f"restate.{called}({field})" for field in first)
                yield from (f"{OPTIONS[called]}.{o}" for o in _keys(first.get("options")))
            elif called in HANDLER_OPTIONS:
                yield from (f"{HANDLER_OPTIONS[called]}.{o}" for o in first)
            elif called.endswith(".run") and called.split(".")[0] in contexts and len(arguments) == 3:
                yield from (f"RunOptions.{o}" for o in _keys(arguments[2]))
        elif node.type == "object" and node.parent is not None:
            # A literal of a named option type: the return of a function declared to return one.
            typed = _text(_returned_type(node)).lstrip(": ").removeprefix("restate.")
            if typed in TYPED:
                yield from (f"{typed}.{o}" for o in _keys(node))


def _returned_type(literal: tree_sitter.Node) -> tree_sitter.Node | None:
    statement = literal.parent
    if statement is None or statement.type != "return_statement":
        return None
    function = statement.parent.parent if statement.parent is not None else None
    return None if function is None else function.child_by_field_name("return_type")


def corpus_uses() -> dict[str, list[str]]:
    """Each use found in the corpus apps' source, with the apps that make it (a context member under
    `Context.`, whichever context it was used on; a member of anything else under `*.`)."""
    found: dict[str, list[str]] = {}
    for path in sorted((APPS / "src").glob("*.ts")):
        for use in _uses(path.read_bytes()):
            apps = found.setdefault(use, [])
            if path.stem not in apps:
                apps.append(path.stem)
    return found


def _apps_of(item: str, found: dict[str, list[str]]) -> list[str]:
    owner, _, member = item.partition(".")
    member = member.removesuffix("()")
    if owner in {owner for _, owner in CONTEXTS}:
        return found.get(f"Context.{member}", [])
    if owner in RETURNED:
        return found.get(f"*.{member}", [])
    return found.get(item, [])


def table() -> str:
    found = corpus_uses()
    rows = [f"| `{item}` | {', '.join(_apps_of(item, found)) or '**none**'} |" for item in sdk_api()]
    sdk_version = json.loads((SDK / "package.json").read_text())["version"]
    return "\n".join(
        [
            "",
            f"{HEADING} {sdk_version}",
            "",
            "Every member of its handler contexts and of what they hand back, and every field of its",
            "service, object and workflow definitions, of their options and handler options, of",
            "`RunOptions` and of `RetryPolicy`, with the corpus app (`tests/conformance/ts_apps/src/`) that",
            "uses it. Each app is swept with nothing but `--cmd` by",
            "tests/conformance/test_ts_corpus_sweep.py.",
            "tests/conformance/test_ts_corpus_coverage.py reads the SDK's declarations (.d.ts) and the apps",
            "with tree-sitter, fails when a member or option is used by no app, and writes this section",
            "(`python tests/conformance/test_ts_corpus_coverage.py`). Calls made through `ctx.scope(...)`",
            "need the server's experimental flow control, as in Python: the corpus takes a scope and calls",
            "nothing through it.",
            "",
            "| SDK member or option | corpus app |",
            "| --- | --- |",
            *rows,
            "",
        ]
    )


def test_every_sdk_member_and_option_is_used_by_a_corpus_app() -> None:
    assert SDK.is_dir(), "tests/conformance/ts_apps is not installed: run scripts/setup.sh"
    found = corpus_uses()
    unused = [item for item in sdk_api() if not _apps_of(item, found)]
    assert not unused, (
        "@restatedev/restate-sdk offers these and no corpus app (tests/conformance/ts_apps) uses them: "
        f"{unused}"
    )


def test_the_reference_page_ends_with_the_table_of_this_sdk() -> None:
    page = PAGE.read_text()
    assert HEADING in page and page[page.index(HEADING) - 1 :] == table(), (
        "docs/reference/conformance.md is stale: run `python tests/conformance/test_ts_corpus_coverage.py`"
    )


def test_the_sdk_is_read_whole() -> None:
    # The declarations read are the SDK's: the contexts' own methods, options of each kind, a policy's fields.
    api = sdk_api()
    assert {"Context.run()", "ObjectContext.clearAll()", "WorkflowSharedContext.promise()"} <= set(api)
    assert {"WorkflowOptions.workflowRetention", "ObjectHandlerOpts.enableLazyState"} <= set(api)
    assert {"RetryPolicy.onMaxAttempts", "RunOptions.maxRetryAttempts", "restate.object(options)"} <= set(api)


def test_a_use_removed_from_the_corpus_is_missed() -> None:
    # The check can fail: without the apps' uses of `ctx.sleep`, it is reported.
    found = corpus_uses()
    del found["Context.sleep"]
    assert [item for item in sdk_api() if not _apps_of(item, found)] == ["Context.sleep()"]


if __name__ == "__main__":
    page = PAGE.read_text()
    kept = page[: page.index(HEADING) - 1] if HEADING in page else page
    PAGE.write_text(kept + table())
    sys.exit(0)
