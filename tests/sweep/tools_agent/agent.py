"""One tool loop in each of the stub's three API formats, the model asking for several tools in one answer
(parallel tool calling): OpenAI chat completions (ChatTools), OpenAI Responses (ResponsesTools) and
Anthropic Messages (AnthropicTools), with the vendors' own clients. Each tool call runs as a journaled step;
the model calls are made outside the journal. For tests/sweep/test_sweep_answers.py."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import restate

WEATHER = {"Paris": "sunny, 18 degrees", "Rome": "cloudy, 21 degrees"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def weather(city: str) -> str:
    return WEATHER.get(city, "unknown")


async def run_tool(ctx: restate.Context, name: str, arguments: str | dict[str, Any]) -> str:
    given = json.loads(arguments) if isinstance(arguments, str) else arguments
    assert name == "weather", name
    return await ctx.run_typed(f"weather {given['city']}", weather, city=given["city"])


chat = restate.Service("ChatTools")
responses = restate.Service("ResponsesTools")
messages_api = restate.Service("AnthropicTools")


@chat.handler()
async def ask(ctx: restate.Context, question: str) -> str:
    client = openai.AsyncOpenAI()
    tools: Any = [{"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}]
    conversation: list[Any] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await client.chat.completions.create(model="gpt-4o-mini", messages=conversation, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return str(message.content)
        conversation.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = await run_tool(ctx, call.function.name, call.function.arguments)
            conversation.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "too many rounds"


@responses.handler("ask")
async def ask_responses(ctx: restate.Context, question: str) -> str:
    client = openai.AsyncOpenAI()
    tools: Any = [{"type": "function", "name": "weather", "parameters": SCHEMA}]
    items: list[Any] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await client.responses.create(model="gpt-4o-mini", input=items, tools=tools)
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            return reply.output_text
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        for call in calls:
            result = await run_tool(ctx, call.name, call.arguments)
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": result})
    return "too many rounds"


@messages_api.handler("ask")
async def ask_anthropic(ctx: restate.Context, question: str) -> str:
    client = anthropic.AsyncAnthropic()
    tools: Any = [{"name": "weather", "description": "The weather in a city.", "input_schema": SCHEMA}]
    conversation: list[Any] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await client.messages.create(
            model="claude-sonnet-4-5", max_tokens=512, messages=conversation, tools=tools
        )
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        conversation.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        results = [
            {
                "type": "tool_result",
                "tool_use_id": use.id,
                "content": await run_tool(ctx, use.name, use.input),
            }
            for use in uses
        ]
        conversation.append({"role": "user", "content": results})
    return "too many rounds"


app = restate.app([chat, responses, messages_api])
