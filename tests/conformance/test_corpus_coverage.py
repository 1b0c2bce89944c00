"""The conformance corpus (tests/conformance/apps) covers restate-sdk's whole API: every option of the
`Service`, `VirtualObject` and `Workflow` constructors and of their handler decorators, of `RunOptions` and
`InvocationRetryPolicy`, and every public method of the contexts and of a Workflow's durable promise, read
from the installed SDK with `inspect`. An SDK upgrade that adds one fails here until a corpus app uses it.
The uses are read from the apps' source with `ast`. docs/reference/conformance.md is this test's table:
`python tests/conformance/test_corpus_coverage.py` writes it."""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import restate

ROOT = Path(__file__).resolve().parents[2]
APPS = Path(__file__).resolve().parent / "apps"
PAGE = ROOT / "docs" / "reference" / "conformance.md"

#: The constructors whose options are covered, by the name an app calls them with.
CONSTRUCTORS: dict[str, Callable[..., object]] = {
    "Service": restate.Service,
    "VirtualObject": restate.VirtualObject,
    "Workflow": restate.Workflow,
    "RunOptions": restate.RunOptions,
    "InvocationRetryPolicy": restate.InvocationRetryPolicy,
}
#: The decorators of each kind of service, by method name.
DECORATORS: dict[str, tuple[str, ...]] = {
    "Service": ("handler",),
    "VirtualObject": ("handler",),
    "Workflow": ("main", "handler"),
}
#: The contexts a handler is given, in the order a method is said to belong to (the first that has it).
CONTEXTS: tuple[type, ...] = (
    restate.Context,
    restate.ObjectSharedContext,
    restate.ObjectContext,
    restate.WorkflowSharedContext,
    restate.WorkflowContext,
)


def _options(function: Callable[..., object]) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name != "self"]


def _public(cls: type) -> list[str]:
    return sorted(name for name, _ in inspect.getmembers(cls, callable) if not name.startswith("_"))


def sdk_api() -> list[str]:
    """Every option and method of the installed SDK the corpus must use, as `Owner(option)` or
    `Owner.method(option)` or `Owner.method()`."""
    items = [f"{name}({option})" for name, cls in CONSTRUCTORS.items() for option in _options(cls)]
    for name, methods in DECORATORS.items():
        for method in methods:
            owner = getattr(CONSTRUCTORS[name], method)
            items += [f"{name}.{method}({option})" for option in _options(owner)]
    owned: dict[str, str] = {}
    for context in CONTEXTS:
        for method in _public(context):
            owned.setdefault(method, context.__name__)
    items += [f"{owner}.{method}()" for method, owner in sorted(owned.items(), key=lambda kv: kv[::-1])]
    items += [f"DurablePromise.{method}()" for method in _public(restate.DurablePromise)]
    return items


def _called(node: ast.expr) -> str:
    """The name a call is made through: `restate.Service` -> Service, `desk.handler` -> handler."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _uses(tree: ast.Module) -> Iterator[str]:
    kinds: dict[str, str] = {}  # a service's variable -> its constructor
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            made = _called(node.value.func)
            if made in DECORATORS:
                kinds.update({t.id: made for t in node.targets if isinstance(t, ast.Name)})
    contexts: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef):
            for arg in node.args.args:
                if arg.annotation is not None and ast.unparse(arg.annotation).endswith("Context"):
                    contexts.add(arg.arg)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node.func)
        given = [k.arg for k in node.keywords if k.arg]
        if name in CONSTRUCTORS:
            yield from (f"{name}({o})" for o in [*_options(CONSTRUCTORS[name])[: len(node.args)], *given])
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            receiver = node.func.value.id
            if receiver in kinds and name in DECORATORS[kinds[receiver]]:
                options = _options(getattr(CONSTRUCTORS[kinds[receiver]], name))
                yield from (f"{kinds[receiver]}.{name}({o})" for o in [*options[: len(node.args)], *given])
            if receiver in contexts:
                yield f"Context.{name}()"
        if isinstance(node.func, ast.Attribute):
            # A promise's methods, on `ctx.promise(...)` or on a name given one.
            yield f"DurablePromise.{name}()"


def corpus_uses() -> dict[str, list[str]]:
    """Each use found in the corpus apps' source, with the apps that make it (a context method under
    `Context.`, whichever context it was called on)."""
    found: dict[str, list[str]] = {}
    for path in sorted(APPS.glob("*.py")):
        for use in _uses(ast.parse(path.read_text())):
            apps = found.setdefault(use, [])
            if path.stem not in apps:
                apps.append(path.stem)
    return found


def _apps_of(item: str, found: dict[str, list[str]]) -> list[str]:
    if item.endswith("()") and not item.startswith("DurablePromise"):
        return found.get("Context." + item.split(".", 1)[1], [])
    return found.get(item, [])


def table() -> str:
    found = corpus_uses()
    rows = [f"| `{item}` | {', '.join(_apps_of(item, found)) or '**none**'} |" for item in sdk_api()]
    return "\n".join(
        [
            "# Conformance corpus",
            "",
            f"Every option and public method of restate-sdk {version('restate-sdk')}'s Python API, with the",
            "corpus app (`tests/conformance/apps/`) that uses it. Each app is linted, swept with no",
            "configuration and replay-checked by tests/conformance/test_corpus_sweep.py.",
            "tests/conformance/test_corpus_coverage.py reads the SDK with `inspect` and the apps with `ast`,",
            "fails when an option or method is used by no app, and writes this page",
            "(`python tests/conformance/test_corpus_coverage.py`).",
            "",
            "Calls made through `ctx.scope(...)` need restate-server's experimental flow control",
            "(`RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7`, `RESTATE_EXPERIMENTAL_ENABLE_VQUEUES`), which the",
            "lab's server does not turn on: the corpus takes a scope and makes no call through it.",
            "",
            "| SDK option or method | corpus app |",
            "| --- | --- |",
            *rows,
            "",
        ]
    )


def test_every_sdk_option_and_method_is_used_by_a_corpus_app() -> None:
    found = corpus_uses()
    unused = [item for item in sdk_api() if not _apps_of(item, found)]
    assert not unused, (
        f"restate-sdk offers these and no corpus app (tests/conformance/apps) uses them: {unused}"
    )


def test_the_reference_page_is_the_table_of_this_sdk() -> None:
    # The page goes on with the TypeScript SDK's table (tests/conformance/test_ts_corpus_coverage.py).
    assert PAGE.read_text().startswith(table()), (
        "docs/reference/conformance.md is stale: run `python tests/conformance/test_corpus_coverage.py`"
    )


def test_a_use_removed_from_the_corpus_is_missed() -> None:
    # The check can fail: without the apps' uses of `ctx.sleep`, it is reported.
    found = corpus_uses()
    del found["Context.sleep()"]
    assert [item for item in sdk_api() if not _apps_of(item, found)] == ["Context.sleep()"]


if __name__ == "__main__":
    page = PAGE.read_text()
    typescript = page.find("\n## TypeScript")
    PAGE.write_text(table() + (page[typescript:] if typescript >= 0 else ""))
    sys.exit(0)
