"""A chain of prompts, written with the official `openai` client: each call transforms the previous answer.

The report goes through four prompts in turn (extract the figures, make them percentages, sort them, format a
table), each a conversation of its own. Every call is "turn 1" of its conversation, so its script file tells
the calls apart by what they ask (`when`). Two handlers differ in one line: `run` journals each model call
(`ctx.run_typed`), `run_naive` makes it plainly, so a replay pays again for every answer that had come back.

    paidtwice sweep --app agent:app --service Chain --handler run \\
        --input '"Revenue grew 45% to 2.3M; customer churn fell from 8% to 5%."' \\
        --script examples/chain_agent/script.toml --app-dir examples/chain_agent
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

STEPS = (
    "Extract only the numerical values and their metrics from the text below, one per line.",
    "Convert every value below to a percentage where possible, one per line.",
    "Sort the lines below in descending order of their value.",
    "Format the sorted data below as a markdown table with the columns Metric and Value.",
)

chain = restate.Service("Chain")


async def ask(prompt: str) -> str:
    """One chat-completions call with a single user message; returns the answer's text."""
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


async def process(report: str, model: Callable[[str, str], Awaitable[str]]) -> str:
    """Run the report through every prompt; `model(name, prompt)` asks the model."""
    result = report
    for number, step in enumerate(STEPS, start=1):
        result = await model(f"step {number}", f"{step}\n\nInput:\n{result}")
    return result


@chain.handler()
async def run(ctx: restate.Context, report: str) -> str:
    """The chain with every model call journaled: a replay reads the answers back."""
    return await process(report, lambda name, prompt: ctx.run_typed(name, ask, prompt=prompt))


@chain.handler()
async def run_naive(ctx: restate.Context, report: str) -> str:
    """The same chain with the model calls outside the journal."""
    return await process(report, lambda name, prompt: ask(prompt))


app = restate.app([chain])
