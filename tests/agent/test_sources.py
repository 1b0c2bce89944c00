"""What the sweep reads of a command's code that its wire does not say: which shared handler of a Workflow
resolves each promise (the sweep resolves the promise by calling it), in the shapes TypeScript code takes."""

from __future__ import annotations

from pathlib import Path

from paidtwice.agent._sources import mentions_awakeables, promise_resolvers_in

CORPUS = Path(__file__).resolve().parents[1] / "ts_corpus"


def _code(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "app.ts").write_text(text)
    return folder


def test_the_resolving_handler_is_the_one_defined_before_the_resolve(tmp_path: Path) -> None:
    literal = _code(tmp_path, "literal", """
        restate.workflow({ name: "Signup", handlers: {
          run: async (ctx: WorkflowContext) => await ctx.promise<string>("link-clicked"),
          click: async (ctx: WorkflowSharedContext, r: { secret: string }) => {
            await ctx.promise<string>("link-clicked").resolve(r.secret);
          },
          cancel: async (ctx: WorkflowSharedContext) => ctx.promise("link-clicked").reject("cancelled"),
          approve: async (ctx: WorkflowSharedContext, v: boolean) => { await ctx.promise('ok').resolve(v); },
        }});
    """)  # fmt: skip
    shared = {"Signup": ["click", "cancel", "approve"]}
    assert promise_resolvers_in(literal, shared) == {"Signup": {"link-clicked": "click", "ok": "approve"}}
    functions = _code(tmp_path, "functions", """
        async function decide(ctx: restate.WorkflowSharedContext, d: Decision) {
          await ctx.promise<Decision>(
            "decision"
          ).resolve(d);
        }
        async function run(ctx: restate.WorkflowContext) { return await ctx.promise<Decision>("decision"); }
    """)  # fmt: skip
    assert promise_resolvers_in(functions, {"Claims": ["decide"]}) == {"Claims": {"decision": "decide"}}


def test_a_workflow_with_one_shared_handler_resolves_through_it(tmp_path: Path) -> None:
    """The handler wraps a function of another name: the workflow's only shared handler is the one."""
    folder = _code(tmp_path, "wrapped", """
        const approveImpl = async (ctx: WorkflowSharedContext, v: boolean) => ctx.promise("ok").resolve(v);
        export const wf = restate.workflow({ name: "Wf", handlers: { run, approve: approveImpl } });
    """)  # fmt: skip
    assert promise_resolvers_in(folder, {"Wf": ["approve"]}) == {"Wf": {"ok": "approve"}}
    assert promise_resolvers_in(folder, {"Wf": ["approve", "other"]}) == {}
    assert promise_resolvers_in(folder, {}) == {}


def test_awakeables_are_read_from_the_app_not_its_dependencies(tmp_path: Path) -> None:
    folder = _code(tmp_path, "app", "export const answer = 42;")
    (folder / "node_modules" / "@restatedev").mkdir(parents=True)
    (folder / "node_modules" / "@restatedev" / "sdk.js").write_text("export function awakeable() {}")
    assert not mentions_awakeables(folder)
    assert mentions_awakeables(CORPUS)
