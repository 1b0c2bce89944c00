"""PT001: litellm.completion / acompletion in a handler, also from-imported; not inside ctx.run_typed."""

import litellm
import restate
from litellm import acompletion

router = restate.Service("Router")


@router.handler()
async def ask(ctx: restate.Context, question: str) -> str:
    messages = [{"role": "user", "content": question}]
    response = await acompletion(model="gpt-4o-mini", messages=messages)  # expect: PT001
    again = litellm.completion(model="claude-sonnet-4-5", messages=messages)  # expect: PT001
    return response.choices[0].message.content + again.choices[0].message.content


async def complete(question: str) -> str:
    messages = [{"role": "user", "content": question}]
    response = await litellm.acompletion(model="gpt-4o-mini", messages=messages)
    return str(response.choices[0].message.content)


@router.handler()
async def ask_journaled(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("model", complete, question=question)
