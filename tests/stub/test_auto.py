"""`--script auto`: the stub answers from the request, through the official clients and the frameworks, in
chat completions, Responses and Anthropic Messages (streamed too); every argument and structured answer is
validated against its schema with jsonschema; the same seed answers the same; the variations differ as they
say; the answers written as a script file answer the same when read back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import anthropic
import jsonschema
import openai
import pydantic
import pytest

from paidtwice.stub import StubModel
from paidtwice.stub._auto import AutoBook, auto_script, reach_script
from paidtwice.stub._turns import load_script_file

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "pattern": "^[A-Z][a-z]{2,12}$"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90}},
            "required": ["lat"],
        },
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
    },
    "required": ["city", "unit", "days", "where", "tags"],
    "additionalProperties": False,
}
BOOKING = {
    "type": "object",
    "properties": {"hotel": {"type": "string", "minLength": 3}, "nights": {"type": "integer", "minimum": 1}},
    "required": ["hotel", "nights"],
}
SCHEMAS = {"get_weather": WEATHER, "book_hotel": BOOKING}


def chat_tools() -> list[Any]:
    return [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel() as running:
        yield running


def test_chat_completions_tools_parallel_then_final(stub: StubModel) -> None:
    lane = stub.open_lane(auto_script("steady", seed=7))
    client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    question = [{"role": "user", "content": "Weather in Paris, and a hotel?"}]
    first = client.chat.completions.create(model="m", messages=question, tools=chat_tools())  # type: ignore[arg-type]
    calls = first.choices[0].message.tool_calls or []
    assert first.choices[0].finish_reason == "tool_calls"
    assert sorted(c.function.name for c in calls) == ["book_hotel", "get_weather"]  # parallel: both
    for call in calls:
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])
    one = client.chat.completions.create(
        model="m",
        messages=question,
        tools=chat_tools(),
        parallel_tool_calls=False,  # type: ignore[arg-type]
    )
    assert len(one.choices[0].message.tool_calls or []) == 1
    history: list[Any] = [*question, first.choices[0].message.model_dump(exclude_none=True)]
    history += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in calls]
    final = client.chat.completions.create(model="m", messages=history, tools=chat_tools())  # type: ignore[arg-type]
    assert final.choices[0].finish_reason == "stop"
    assert "Weather in Paris" in (final.choices[0].message.content or "")


def test_the_same_seed_answers_the_same_and_another_seed_otherwise(stub: StubModel) -> None:
    def arguments(seed: int) -> list[str]:
        lane = stub.open_lane(auto_script("steady", seed=seed))
        client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
        made = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            tools=chat_tools(),  # type: ignore[arg-type]
        )
        return [c.function.arguments for c in made.choices[0].message.tool_calls or []]

    assert arguments(1) == arguments(1)
    assert arguments(1) != arguments(2)


def test_structured_output_parses_into_the_model(stub: StubModel) -> None:
    class Plan(pydantic.BaseModel):
        steps: list[str] = pydantic.Field(min_length=2)
        risk: Literal["low", "high"]
        budget: float = pydantic.Field(gt=0, le=500)

    lane = stub.open_lane(auto_script("steady"))
    client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    parsed = client.chat.completions.parse(
        model="m", messages=[{"role": "user", "content": "plan"}], response_format=Plan
    )
    assert isinstance(parsed.choices[0].message.parsed, Plan)
    response = client.responses.parse(model="m", input="plan", text_format=Plan)
    assert isinstance(response.output_parsed, Plan)


def test_responses_api_tools_streamed(stub: StubModel) -> None:
    lane = stub.open_lane(auto_script("steady"))
    client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    tools: Any = [
        {"type": "function", "name": n, "parameters": s, "strict": False} for n, s in SCHEMAS.items()
    ]
    with client.responses.stream(model="m", input="go", tools=tools, parallel_tool_calls=False) as stream:
        done = stream.get_final_response()
    calls = [item for item in done.output if item.type == "function_call"]
    assert len(calls) == 1
    jsonschema.validate(json.loads(calls[0].arguments), SCHEMAS[calls[0].name])


def test_anthropic_forced_tool_and_parallel_and_stream(stub: StubModel) -> None:
    lane = stub.open_lane(auto_script("steady"))
    client = anthropic.Anthropic(base_url=lane.anthropic_base_url, api_key="stub", max_retries=0)
    tools: Any = [{"name": n, "input_schema": s} for n, s in SCHEMAS.items()]
    forced = client.messages.create(
        model="c",
        max_tokens=64,
        messages=[{"role": "user", "content": "book"}],
        tools=tools,
        tool_choice={"type": "tool", "name": "book_hotel"},
    )
    uses = [b for b in forced.content if b.type == "tool_use"]
    assert [u.name for u in uses] == ["book_hotel"]
    jsonschema.validate(uses[0].input, BOOKING)
    with client.messages.stream(
        model="c", max_tokens=64, messages=[{"role": "user", "content": "both"}], tools=tools
    ) as stream:
        message = stream.get_final_message()
    uses = [b for b in message.content if b.type == "tool_use"]
    assert len(uses) == 2
    for use in uses:
        jsonschema.validate(use.input, SCHEMAS[use.name])
    single = client.messages.create(
        model="c",
        max_tokens=64,
        messages=[{"role": "user", "content": "both"}],
        tools=tools,
        tool_choice={"type": "auto", "disable_parallel_tool_use": True},
    )
    assert len([b for b in single.content if b.type == "tool_use"]) == 1


def test_variations_drift_in_words_and_change_from_the_second_ask(stub: StubModel) -> None:
    def asked_twice(variation: str) -> list[tuple[str, str]]:
        lane = stub.open_lane(auto_script(variation, seed=3))
        client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
        got = []
        for _ in range(2):
            made = client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "weather?"}],
                tools=chat_tools(),  # type: ignore[arg-type]
                parallel_tool_calls=False,
            )
            message = made.choices[0].message
            tool = (message.tool_calls or [])[0]
            got.append((message.content or "", f"{tool.function.name}{tool.function.arguments}"))
        return got

    steady, drifting, changed = (asked_twice(v) for v in ("steady", "drifting", "changed"))
    assert steady[0] == steady[1]
    assert drifting[0][1] == drifting[1][1] and drifting[0][0] != drifting[1][0]
    assert changed[0] == steady[0] and changed[1][1] != changed[0][1]


def test_a_reach_script_calls_its_tool_first_and_answers_as_auto_otherwise(stub: StubModel) -> None:
    def first_turn(script: Any, ask: int = 1, **options: Any) -> list[tuple[str, str]]:
        lane = stub.open_lane(script)
        client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
        made = None
        for _ in range(ask):
            made = client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "Weather in Paris, and a hotel?"}],
                tools=chat_tools(),  # type: ignore[arg-type]
                **options,
            )
        assert made is not None
        return [(c.function.name, c.function.arguments) for c in made.choices[0].message.tool_calls or []]

    one = {"parallel_tool_calls": False}
    [(chosen, arguments)] = first_turn(auto_script("steady", seed=7), **one)
    other = next(name for name in SCHEMAS if name != chosen)
    # The tool the seed did not choose is called, with the arguments auto answers make for it; the one it
    # chose, when asked for, is called as auto calls it.
    [(reached, made)] = first_turn(reach_script("steady", other, seed=7), **one)
    assert reached == other
    jsonschema.validate(json.loads(made), SCHEMAS[other])
    assert first_turn(reach_script("steady", chosen, seed=7), **one) == [(chosen, arguments)]
    assert first_turn(reach_script("steady", other, seed=7), **one) == [(reached, made)]
    # Parallel calls allowed: both, the reached one first; `changed` calls another tool when asked again.
    assert [name for name, _ in first_turn(reach_script("steady", other, seed=7))] == [other, chosen]
    [(again, _)] = first_turn(reach_script("changed", other, seed=7), ask=2, **one)
    assert again == chosen
    # A tool the request does not offer changes nothing.
    assert first_turn(reach_script("steady", "absent", seed=7), **one) == [(chosen, arguments)]


def test_pydantic_ai_and_agents_sdk_output_types_parse(stub: StubModel) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    agents = pytest.importorskip("agents")
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    class City(pydantic.BaseModel):
        name: str
        population: int = pydantic.Field(ge=0)
        country: Literal["FR", "DE"]

    lane = stub.open_lane(auto_script("steady"))
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=lane.base_url, api_key="stub"))
    agent = pydantic_ai.Agent(model, output_type=City)

    @agent.tool_plain
    def lookup(name: str, exact: bool) -> str:
        return f"{name}: found"

    result = agent.run_sync("Which city?")
    assert isinstance(result.output, City)

    agents.set_tracing_disabled(True)

    @agents.function_tool
    def find(city: str, limit: int) -> str:
        return f"{city}: {limit}"

    async def both() -> list[Any]:
        client = openai.AsyncOpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
        outputs = []
        for sdk_model in (
            agents.OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client),
            agents.OpenAIResponsesModel(model="gpt-4o", openai_client=client),
        ):
            sdk_agent = agents.Agent(name="a", model=sdk_model, output_type=City, tools=[find])
            outputs.append((await agents.Runner.run(sdk_agent, "Which city?")).final_output)
        return outputs

    assert [type(o) for o in asyncio.run(both())] == [City, City]


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_written_script_answers_as_auto_did(stub: StubModel, tmp_path: Path, suffix: str) -> None:
    book = AutoBook()
    requests: list[dict[str, Any]] = [
        {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "a (b) [c]?"}]},
        {"messages": [{"role": "user", "content": "weather?"}], "tools": chat_tools()},
        {
            "messages": [{"role": "user", "content": "weather?"}, {"role": "assistant", "content": "x"}],
            "tools": chat_tools(),
        },
    ]

    def answers(lane_script: Any, variation_asks: int) -> list[Any]:
        lane = stub.open_lane(lane_script)
        client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
        got = []
        for _ in range(variation_asks):
            for body in requests:
                made = client.chat.completions.create(model="m", **body)
                message = made.choices[0].message
                got.append(
                    (
                        message.content,
                        [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
                    )
                )
        return got

    expected = {v: answers(auto_script(v, seed=5, book=book), 2) for v in ("steady", "drifting", "changed")}
    path = tmp_path / f"answers{suffix}"
    assert auto_script("steady", seed=5, book=book).write(path) == 3
    for variation in ("steady", "drifting", "changed"):
        assert answers(load_script_file(path, variation), 2) == expected[variation], variation


def test_gemini_tools_and_structured_output(stub: StubModel) -> None:
    genai = pytest.importorskip("google.genai")
    types = genai.types
    lane = stub.open_lane(auto_script("steady"))
    client = genai.Client(api_key="stub", http_options=types.HttpOptions(base_url=lane.gemini_base_url))
    tool = types.Tool(
        function_declarations=[types.FunctionDeclaration(name="book_hotel", parameters_json_schema=BOOKING)]
    )
    config = types.GenerateContentConfig(
        tools=[tool], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    made = client.models.generate_content(model="gemini-2.5-flash", contents="Book in Rome", config=config)
    calls = made.function_calls or []
    assert [c.name for c in calls] == ["book_hotel"]
    jsonschema.validate(calls[0].args, BOOKING)
    assert calls[0].args["hotel"] == "Rome"  # a free string, filled from the question

    class Room(pydantic.BaseModel):
        beds: int = pydantic.Field(ge=1, le=3)
        view: Literal["sea", "city"]

    shaped = types.GenerateContentConfig(response_mime_type="application/json", response_schema=Room)
    answer = client.models.generate_content(model="gemini-2.5-flash", contents="A room", config=shaped)
    assert isinstance(answer.parsed, Room)
