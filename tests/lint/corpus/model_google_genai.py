"""PT001: google-genai's client (genai.Client, as Google's ADK calls Gemini), sync and async (client.aio),
whole and streamed."""

import restate
from google import genai

writer = restate.Service("GeminiWriter")

client = genai.Client()


@writer.handler()
async def draft(ctx: restate.Context, topic: str) -> str:
    reply = await client.aio.models.generate_content(  # expect: PT001
        model="gemini-2.5-flash", contents=f"Write a short post about {topic}."
    )
    return str(reply.text)


@writer.handler()
async def title(ctx: restate.Context, post: str) -> str:
    local = genai.Client()
    reply = local.models.generate_content(model="gemini-2.5-flash", contents=post)  # expect: PT001
    return str(reply.text)


@writer.handler()
async def journaled(ctx: restate.Context, post: str) -> str:
    async def summary() -> str:
        reply = await client.aio.models.generate_content(model="gemini-2.5-flash", contents=post)
        return str(reply.text)

    return await ctx.run_typed("summary", summary)
