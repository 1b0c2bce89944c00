"""PT001: a module-level AsyncOpenAI client: chat.completions.create and responses.create."""

import restate
from openai import AsyncOpenAI
from restate import Context

assistant = restate.Service("Assistant")

client = AsyncOpenAI()
MODEL = "gpt-4o-mini"


@assistant.handler()
async def chat(ctx: Context, question: str) -> str:
    completion = await client.chat.completions.create(  # expect: PT001
        model=MODEL,
        messages=[
            {"role": "system", "content": "You are a concise assistant."},
            {"role": "user", "content": question},
        ],
    )
    return completion.choices[0].message.content or ""


@assistant.handler()
async def summarize(ctx: Context, text: str) -> str:
    response = await client.responses.create(model=MODEL, input=f"Summarize:\n{text}")  # expect: PT001
    return response.output_text
