"""A script turn's `errors`: HTTP errors the first asks get, as each API's client sees them (a 429 with
Retry-After, a 500, a timeout), then the turn's answer; and the script keys they are written with."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from support import assert_eventually

from paidtwice.lab import Lab
from paidtwice.stub._turns import ScriptFileError, load_script_file

SCRIPT = """
[[turn]]
text = "It is sunny."
errors = [
    { status = 429, retry_after = 7, message = "slow down" },
    { status = 500 },
    { timeout = 2 },
]
"""


def script(tmp_path: Path, text: str = SCRIPT) -> Path:
    path = tmp_path / "script.toml"
    path.write_text(text)
    return path


def test_the_first_asks_get_the_errors_in_order_then_the_answer(lab: Lab, tmp_path: Path) -> None:
    lane = lab.stub.open_lane(load_script_file(script(tmp_path)))
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather?"}]}
    url = f"{lane.base_url}/chat/completions"
    limited = httpx.post(url, json=body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    assert limited.json()["error"] == {"message": "slow down", "type": "rate_limit_error"}
    failed = httpx.post(url, json=body)
    assert failed.status_code == 500 and "retry-after" not in failed.headers
    assert failed.json()["error"]["type"] == "server_error"
    # The timeout: nothing within the client's 0.5 s; the call is never delivered.
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url, json=body, timeout=0.5)
    assert_eventually(lambda: len(lane.model_calls()) == 3 and lane.model_calls()[2].delivered is False,
                      what="the timed-out call closed as not delivered")  # fmt: skip
    answered = httpx.post(url, json=body)
    assert answered.status_code == 200
    assert answered.json()["choices"][0]["message"]["content"] == "It is sunny."


def test_each_client_raises_its_own_error(lab: Lab, tmp_path: Path) -> None:
    path = script(tmp_path)
    lane = lab.stub.open_lane(load_script_file(path))
    client = openai.OpenAI(base_url=lane.base_url, api_key="stub", max_retries=0)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model="gpt-4o-mini", input="Hi")
    other = lab.stub.open_lane(load_script_file(path))
    claude = anthropic.Anthropic(base_url=other.anthropic_base_url, api_key="stub", max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as raised:
        claude.messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
        )
    assert raised.value.response.headers["retry-after"] == "7"
    assert raised.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        ("{ status = 200 }", "`status` must be an HTTP error status"),
        ("{ status = 429, retry_after = -1 }", "`retry_after` must be a number of seconds"),
        ("{ timeout = 0 }", "`timeout` must be a number of seconds above 0"),
        ("{ timeout = 5, status = 500 }", "a `timeout` answers nothing in time: no `status`"),
        ("{ status = 500, wait = 3 }", "unknown key `wait`"),
    ],
)
def test_bad_errors_name_the_file_and_turn(tmp_path: Path, errors: str, expected: str) -> None:
    path = script(tmp_path, f'[[turn]]\ntext = "a"\nerrors = [{errors}]\n')
    with pytest.raises(ScriptFileError, match=expected) as raised:
        load_script_file(path)
    assert f"{path}:1: turn 1" in str(raised.value)


def test_gemini_gets_googles_error_shape(lab: Lab, tmp_path: Path) -> None:
    from google import genai
    from google.genai import errors, types

    lane = lab.stub.open_lane(load_script_file(script(tmp_path)))
    client = genai.Client(
        api_key="stub", http_options=types.HttpOptions(base_url=lane.gemini_base_url, retry_options=None)
    )
    with pytest.raises(errors.ClientError) as raised:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert raised.value.code == 429 and raised.value.status == "RESOURCE_EXHAUSTED"
    with pytest.raises(errors.ServerError) as failed:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert failed.value.code == 500 and failed.value.status == "INTERNAL"
