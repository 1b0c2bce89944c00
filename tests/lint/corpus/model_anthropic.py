"""PT001: anthropic clients (AsyncAnthropic from-import, anthropic.Anthropic dotted) and messages.create."""

import anthropic
import restate
from anthropic import AsyncAnthropic
from restate import Context

writer = restate.Service("Writer")

claude = AsyncAnthropic()
sync_claude = anthropic.Anthropic()


@writer.handler()
async def draft(ctx: Context, topic: str) -> str:
    msg = await claude.messages.create(  # expect: PT001
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": f"Write a short post about {topic}."}],
    )
    return msg.content[0].text


@writer.handler()
async def title(ctx: Context, post: str) -> str:
    msgs = [{"role": "user", "content": f"Give this post a title:\n{post}"}]
    msg = sync_claude.messages.create(model="claude-haiku-4-5", max_tokens=32, messages=msgs)  # expect: PT001
    return msg.content[0].text.strip()
