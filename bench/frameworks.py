"""The framework examples swept: each framework's plain run against Restate's integration, one row each.

    .venv/bin/python bench/frameworks.py [--framework openai-agents|pydantic-ai|langchain ...]
                                         [--script steady --script changed] [--matrices]

Sweeps `examples/frameworks/` on one server and one stub (every point of every row at once) and prints, per
framework and form: crash points, model calls paid again outside the journal (and at how many points),
model calls cut off in flight, step runs beyond the clean run's, and under `changed` the points that end
stuck or paused: the README's table, row for row. `--matrices` also prints every point. A framework that is
not installed is skipped, said.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from _docs import load_average, markdown_table, write_table

from paidtwice._words import count
from paidtwice.lab import Lab
from paidtwice.report._text import format_sweep
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "frameworks"
QUESTION = "How much is 120 EUR in USD?"
FRAMEWORKS = {
    # name: (module to find, app, plain service, service through Restate's integration)
    "openai-agents": ("agents", "openai_agents_app:app", "AgentsPlain", "AgentsDurable"),
    "pydantic-ai": ("pydantic_ai", "pydantic_ai_app:app", "PydanticPlain", "PydanticDurable"),
    "langchain": ("langchain", "langchain_app:app", "LangchainPlain", "LangchainDurable"),
}
FORMS = {
    "AgentsPlain": "OpenAI Agents SDK, `Runner.run`",
    "AgentsDurable": "OpenAI Agents SDK, `DurableRunner.run`",
    "PydanticPlain": "pydantic-ai, `Agent.run`",
    "PydanticDurable": "pydantic-ai, `RestateAgent(agent).run`",
    "LangchainPlain": "LangChain `create_agent`, no middleware",
    "LangchainDurable": "LangChain `create_agent`, `RestateMiddleware()`",
}
"""Each service's row, as the README's table names it."""


def targets(names: list[str]) -> list[AppTarget]:
    chosen = []
    for name in names:
        module, app, plain, durable = FRAMEWORKS[name]
        if importlib.util.find_spec(module) is None:
            print(f"{name}: not installed (pip install -e '.[frameworks]'), skipped")
            continue
        for service in (plain, durable):
            chosen.append(AppTarget(app, service, "quote", QUESTION, mode=service, cwd=str(EXAMPLES)))
    return chosen


def row(steady: SweepMatrix, changed: SweepMatrix | None) -> list[str]:
    points = steady.points
    outside = sum(max(0, p.extra_model_calls - p.model_calls_in_flight) for p in points)
    outside_at = sum(1 for p in points if p.extra_model_calls > p.model_calls_in_flight)
    flight = sum(p.model_calls_in_flight for p in points)
    steps = sum(max(0, p.extra_step_runs) for p in points)
    steps_outside = sum(max(0, p.extra_step_runs - p.steps_in_flight) for p in points)
    stuck = "-"
    if changed is not None:
        ended = [p for p in changed.points if p.status in ("paused", "stuck")]
        stuck = f"{len(ended)}/{len(changed.points)}"
    paid = f"{outside} (at {count(outside_at, 'point')})" if outside else "0"
    form = FORMS.get(steady.mode, steady.mode)
    return [form, str(len(points)), paid, str(flight), f"{steps} ({steps_outside})", stuck]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--framework", action="append", choices=sorted(FRAMEWORKS), default=[])
    parser.add_argument("--script", action="append", choices=["steady", "drifting", "changed"], default=[])
    parser.add_argument("--matrices", action="store_true")
    args = parser.parse_args()
    chosen = targets(args.framework or list(FRAMEWORKS))
    names = args.script or ["steady", "changed"]
    scripts = [(name, load_script_file(EXAMPLES / "script.toml", name)) for name in names]
    load_before = load_average()
    with Lab(echo=lambda message: None) as lab:
        matrices = sweep_targets(lab, targets=chosen, scripts=scripts)
    if args.matrices:
        for matrix in matrices:
            print(format_sweep(matrix) + "\n")
    by = {(m.mode, m.script): m for m in matrices}
    # The docs' table, row for row; each clean run's own counts head its matrix (--matrices).
    headers = [
        "framework / form",
        "crash points",
        "model calls paid again outside the journal",
        "cut off in flight",
        "step runs again (outside flight)",
        "stuck under `changed`",
    ]
    rows = []
    for target in chosen:
        steady = by.get((target.mode, "steady"))
        if steady is not None:
            rows.append(row(steady, by.get((target.mode, "changed"))))
    print(markdown_table(headers, rows))
    write_table("frameworks", headers, rows, load=f"{load_before} to {load_average()}")


if __name__ == "__main__":
    main()
