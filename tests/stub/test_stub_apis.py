"""The stub speaks the three model APIs an agent uses, through the official clients, on the session's stub:
OpenAI chat completions, OpenAI Responses and Anthropic Messages, tool use included, counted per lane."""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai
from support import assert_eventually

from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "frameworks" / "script.toml"


def test_anthropic_messages_with_tool_use(lab: Lab) -> None:
    lane = lab.stub.open_lane(load_script_file(SCRIPT, "steady"))
    client = anthropic.Anthropic(base_url=lane.anthropic_base_url, api_key="stub", max_retries=0)
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": "120 EUR in USD?"}]
    first = client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=messages)
    assert first.stop_reason == "tool_use"
    use = next(block for block in first.content if block.type == "tool_use")
    assert (use.name, use.input) == ("convert", {"amount": 120, "source": "EUR", "target": "USD"})
    messages.append({"role": "assistant", "content": first.content})
    result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": use.id,
        "content": "129.6",
    }
    messages.append({"role": "user", "content": [result]})
    second = client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=messages)
    assert second.stop_reason == "end_turn"
    assert [b.text for b in second.content if b.type == "text"] == ["120 EUR is 129.60 USD."]
    # No header: the lane is the agent's own, so the ledger counts it there (closed just after the send).
    assert [(c.turn, c.invocation_id) for c in lane.model_calls()] == [(1, ""), (2, "")]
    assert_eventually(lambda: all(c.delivered for c in lane.model_calls()), what="both calls delivered")


def test_openai_responses_with_a_function_call(lab: Lab) -> None:
    lane = lab.stub.open_lane(load_script_file(SCRIPT, "steady"))
    client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    first = client.responses.create(model="gpt-4o-mini", input="120 EUR in USD?")
    calls = [item for item in first.output if item.type == "function_call"]
    assert [(c.name, c.arguments) for c in calls] == [
        ("convert", '{"amount": 120, "source": "EUR", "target": "USD"}')
    ]
    history = [
        {"role": "user", "content": "120 EUR in USD?"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "129.6"},
    ]
    second = client.responses.create(model="gpt-4o-mini", input=history)
    assert second.output_text == "120 EUR is 129.60 USD."
    assert [c.turn for c in lane.model_calls()] == [1, 2]


def test_streamed_answers_on_each_api_say_what_the_whole_ones_say(lab: Lab) -> None:
    # An agent that streams reads events, not a JSON body: each API's stream, tool calls included.
    lane = lab.stub.open_lane(load_script_file(SCRIPT, "steady"))
    chat = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    ask = [{"role": "user", "content": "120 EUR in USD?"}]
    chunks = list(
        chat.chat.completions.create(
            model="gpt-4o-mini", messages=ask, stream=True, stream_options={"include_usage": True}
        )
    )
    calls = [c.function for k in chunks if k.choices for c in k.choices[0].delta.tool_calls or []]
    assert [(c.name, c.arguments) for c in calls] == [
        ("convert", '{"amount": 120, "source": "EUR", "target": "USD"}')
    ]
    assert [k.choices[0].finish_reason for k in chunks if k.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0

    claude = anthropic.Anthropic(base_url=lane.anthropic_base_url, api_key="stub", max_retries=0)
    with claude.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=ask) as stream:
        first = stream.get_final_message()
    use = next(block for block in first.content if block.type == "tool_use")
    assert (first.stop_reason, use.name, use.input) == (
        "tool_use",
        "convert",
        {"amount": 120, "source": "EUR", "target": "USD"},
    )

    with chat.responses.stream(model="gpt-4o-mini", input="120 EUR in USD?") as events:
        response = events.get_final_response()
    assert [(i.type, getattr(i, "name", None)) for i in response.output][-1] == ("function_call", "convert")
    assert [c.turn for c in lane.model_calls()] == [1, 1, 1]
