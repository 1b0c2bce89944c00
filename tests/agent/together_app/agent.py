"""Three steps gathered whose results are ready in one turn of the loop: the SDK sends their three
ProposeRunCompletions together, and the server journals each as it reads it."""

import asyncio

import restate

together = restate.Service("Together")


@together.handler()
async def run(ctx: restate.Context, question: str) -> str:
    first, second, third = await asyncio.gather(
        ctx.run_typed("one", lambda: "1"),
        ctx.run_typed("two", lambda: "2"),
        ctx.run_typed("three", lambda: "3"),
    )
    return f"{question}: {first}{second}{third}"


app = restate.app([together])
