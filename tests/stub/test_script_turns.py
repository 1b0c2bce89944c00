"""Script files that answer call by call: turns matched by `when`, beside positional turns, on a real stub."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import DEADLINE

from paidtwice.stub import Lane, StubModel
from paidtwice.stub._server import UNANSWERED_STATUS
from paidtwice.stub._turns import ScriptFileError, load_script_file

ROOT = Path(__file__).resolve().parents[2]

MIXED = """\
# A router's classification and its specialist, beside a positional tool conversation.
[[turn]]
when = "(?i)select the most appropriate support team"
text = "<selection>billing</selection>"
changed = { text = "<selection>technical</selection>" }

[[turn]]
when_system = "billing support"
text = "Your refund is on its way."
drift = ["The refund has been sent.", "We sent your refund."]

[[turn]]
text = "Let me convert that."
tool = "convert"
arguments = { amount = 120, source = "EUR", target = "USD" }

[[turn]]
text = "120 EUR is 129.60 USD."
changed = { text = "About 130 USD." }
"""


@pytest.fixture(scope="module")
def stub() -> Iterator[StubModel]:
    with StubModel() as running:
        yield running


def write(tmp_path: Path, text: str, name: str = "script.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def ask(lane: Lane, messages: list[dict[str, Any]], invocation: str = "inv_1") -> httpx.Response:
    return httpx.post(
        f"{lane.base_url}/chat/completions",
        json={"model": "m", "messages": messages},
        headers={"x-paidtwice-invocation": invocation},
        timeout=30.0,
    )


def content(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


CLASSIFY: list[dict[str, Any]] = [
    {"role": "user", "content": "Select the most appropriate support team for: refund missing"}
]
SPECIALIST: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a billing support specialist."},
    {"role": "user", "content": "refund missing"},
]
QUESTION: list[dict[str, Any]] = [{"role": "user", "content": "How much is 120 EUR in USD?"}]
AFTER_TOOL: list[dict[str, Any]] = [
    *QUESTION,
    {"role": "assistant", "content": "Let me convert that.", "tool_calls": []},
    {"role": "tool", "tool_call_id": "call_1", "content": "129.6"},
]


def test_matched_and_positional_turns_in_one_script(stub: StubModel, tmp_path: Path) -> None:
    lane = stub.open_lane(load_script_file(write(tmp_path, MIXED), "steady"))
    assert content(ask(lane, CLASSIFY)) == "<selection>billing</selection>"
    assert content(ask(lane, SPECIALIST)) == "Your refund is on its way."
    first = ask(lane, QUESTION).json()["choices"][0]["message"]
    assert first["tool_calls"][0]["function"]["name"] == "convert"
    assert content(ask(lane, AFTER_TOOL)) == "120 EUR is 129.60 USD."
    # Every call has its own turn in the ledger: the number of the `[[turn]]` that answered it.
    assert [c.turn for c in lane.model_calls("inv_1")] == [1, 2, 3, 4]
    assert all(c.ask == 1 and not c.unanswered for c in lane.model_calls("inv_1"))


def test_changed_applies_to_the_callasked_again(stub: StubModel, tmp_path: Path) -> None:
    lane = stub.open_lane(load_script_file(write(tmp_path, MIXED), "changed"))
    # A replay asks the classification and the specialist again: only those two calls change their mind,
    # each on its own second ask, whatever else was asked in between.
    answers = [content(ask(lane, messages)) for messages in (CLASSIFY, SPECIALIST, QUESTION, CLASSIFY)]
    assert answers[0] == "<selection>billing</selection>"
    assert answers[3] == "<selection>technical</selection>"
    assert content(ask(lane, SPECIALIST)) == "Your refund is on its way."  # no `changed`: stays
    assert content(ask(lane, AFTER_TOOL)) == "120 EUR is 129.60 USD."  # first ask of turn 4
    assert content(ask(lane, AFTER_TOOL)) == "About 130 USD."
    calls = lane.model_calls("inv_1")
    assert [(c.turn, c.ask) for c in calls] == [(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (4, 1), (4, 2)]


def test_drifting_words_follow_the_matched_turn(stub: StubModel, tmp_path: Path) -> None:
    lane = stub.open_lane(load_script_file(write(tmp_path, MIXED), "drifting"))
    # The specialist asked again is answered in other words, whatever was asked in between (calls 1 and 3
    # of the invocation, its asks 1 and 2).
    first = content(ask(lane, SPECIALIST))
    content(ask(lane, CLASSIFY))
    again = content(ask(lane, SPECIALIST))
    assert (first, again) == ("The refund has been sent.", "We sent your refund.")


def test_a_call_no_turn_answers_is_an_error_in_the_ledger(stub: StubModel, tmp_path: Path) -> None:
    lane = stub.open_lane(load_script_file(write(tmp_path, MIXED), "steady"))
    # The positional turns answer the conversation's turns 1 and 2; a third is answered by none.
    third: list[dict[str, Any]] = [
        *AFTER_TOOL,
        {"role": "assistant", "content": "?"},
        {"role": "user", "content": "And in GBP?"},
    ]
    response = ask(lane, third)
    assert response.status_code == UNANSWERED_STATUS
    message = response.json()["error"]["message"]
    assert message.startswith("no turn of the script answers this call: last user message 'And in GBP?'")
    (call,) = lane.model_calls("inv_1")
    assert call.unanswered and call.answer.status == UNANSWERED_STATUS and call.answer.text == message


def test_a_script_of_only_matched_turns_answers_nothing_else(stub: StubModel, tmp_path: Path) -> None:
    only = write(tmp_path, '[[turn]]\nwhen = "^Summarize"\ntext = "A summary."\n')
    lane = stub.open_lane(load_script_file(only, "steady"))
    assert content(ask(lane, [{"role": "user", "content": "Summarize this."}])) == "A summary."
    response = ask(lane, [{"role": "user", "content": "Translate this."}])
    assert response.status_code == UNANSWERED_STATUS
    assert "no turn of the script answers this call" in response.text


def test_two_turns_matching_one_call_name_their_lines(stub: StubModel, tmp_path: Path) -> None:
    text = '[[turn]]\nwhen = "refund"\ntext = "a"\n\n[[turn]]\nwhen = "missing"\ntext = "b"\n'
    path = write(tmp_path, text)
    lane = stub.open_lane(load_script_file(path, "steady"))
    response = ask(lane, [{"role": "user", "content": "refund missing"}])
    assert response.status_code == UNANSWERED_STATUS
    assert response.json()["error"]["message"].startswith(
        f"{path}:6: turns 1 (line 2) and 2 (line 6) of the script both answer this call"
    )


def test_positional_scripts_answer_past_their_end_like_their_last_turn(
    stub: StubModel, tmp_path: Path
) -> None:
    positional = write(tmp_path, '[[turn]]\ntext = "one"\n\n[[turn]]\ntext = "two"\n')
    lane = stub.open_lane(load_script_file(positional, "steady"))
    third: list[dict[str, Any]] = [*AFTER_TOOL, {"role": "assistant", "content": "x"}]
    assert [content(ask(lane, m)) for m in (QUESTION, AFTER_TOOL, third)] == ["one", "two", "two"]


def test_a_matched_conversation_with_a_tool_loop_answers_by_position(stub: StubModel, tmp_path: Path) -> None:
    text = (
        '[[turn]]\nwhen_system = "billing support"\nposition = 1\ntext = "Looking it up."\n'
        'tool = "invoice"\n\n'
        '[[turn]]\nwhen_system = "billing support"\nposition = 2\ntext = "Refunded."\n'
    )
    lane = stub.open_lane(load_script_file(write(tmp_path, text), "steady"))
    first = ask(lane, SPECIALIST).json()["choices"][0]["message"]
    assert first["tool_calls"][0]["function"]["name"] == "invoice"
    after_tool = [
        *SPECIALIST,
        {"role": "assistant", "content": "Looking it up."},
        {"role": "tool", "content": "{}"},
    ]
    assert content(ask(lane, after_tool)) == "Refunded."
    assert [c.turn for c in lane.model_calls("inv_1")] == [1, 2]
    third = [
        *after_tool,
        {"role": "assistant", "content": "Refunded."},
        {"role": "user", "content": "Thanks"},
    ]
    assert ask(lane, third).status_code == UNANSWERED_STATUS  # position 3 of that conversation: no turn


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[[turn]]\ntext = "a"\n\n[[turn]]\nwhen = "team ("\ntext = "b"\n', 5, "is not a valid regular"),
        ('[[turn]]\nwhen = "team"\ntext = "a"\n\n[[turn]]\nwhen = "team"\ntext = "b"\n', 6, "line 2"),
        ('[[turn]]\nwhen_system = ["x"]\ntext = "a"\n', 2, "must be a non-empty regular expression"),
        ('[[turn]]\ntext = "a"\nposition = 2\n', 1, "`position` goes with `when` or `when_system`"),
        ('[[turn]]\nwhen = "a"\nposition = 0\ntext = "a"\n', 2, "`position` must be a conversation turn"),
        ('[[turn]]\nwehn = "^Plan"\ntext = "a"\n', 1, "unknown key `wehn` (known: text, tool, arguments"),
        ('[[turn]]\ntext = "a"\nchange = { text = "b" }\n', 1, "unknown key `change` (known: "),
        ('[[turn]]\ntext = "a"\nchanged = { txt = "b" }\n', 1, "(changed): unknown key `txt` (known: text, "),
    ],
)
def test_bad_patterns_name_the_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScriptFileError) as raised:
        load_script_file(path, "steady")
    assert str(raised.value).startswith(f"{path}:{line}: turn ")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_json_scripts_match_too(stub: StubModel, tmp_path: Path) -> None:
    turns = {"turn": [{"when": "^Summarize", "text": "A summary."}, {"when": "(", "text": "x"}]}
    path = write(tmp_path, json.dumps(turns, indent=2), "script.json")
    with pytest.raises(ScriptFileError, match=rf"^{path}:8: turn 2: `when` is not a valid regular"):
        load_script_file(path, "steady")
    path.write_text(json.dumps({"turn": turns["turn"][:1]}, indent=2))
    lane = stub.open_lane(load_script_file(path, "steady"))
    assert content(ask(lane, [{"role": "user", "content": "Summarize it"}])) == "A summary."


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    bad = write(tmp_path, '[[turn]]\ntext = "a"\n\n[[turn]]\nwhen = "[unclosed"\ntext = "b"\n')
    example = ROOT / "examples" / "travel_agent"
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "sweep", "--app", "agent:app", "--service", "Travel"]
        + ["--handler", "quote", "--app-dir", str(example), "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:5: turn 2: `when` is not a valid regular expression" in lines[0]


def test_a_replay_matches_turns_as_the_recorded_run_did(tmp_path: Path) -> None:
    from paidtwice.replay._answers import replay_script

    path = tmp_path / "script.toml"
    path.write_text(
        '[[turn]]\nwhen = "plan"\ntext = "a plan"\n\n[[turn]]\nwhen = "summarise"\ntext = "a summary"\n'
    )
    script = load_script_file(path, "steady")
    messages = [{"role": "user", "content": "summarise the plan"}, {"role": "user", "content": "summarise"}]
    asked = [{"role": "user", "content": "summarise it"}]
    replayed = replay_script(script)
    assert replayed.turn_of(asked) == script.turn_of(asked) == 2
    assert replayed.turn_of(messages) == script.turn_of(messages)
    # ... and answers each matched turn as its next ask.
    assert replayed.answer(turn=2, ask=1, call=1).summary == script.answer(turn=2, ask=2, call=2).summary


def test_one_turn_answering_many_calls_counts_each_call_apart(stub: StubModel, tmp_path: Path) -> None:
    from paidtwice.lab import extra_calls

    text = '[[turn]]\nwhen = "^Write the part"\ntext = "A paragraph."\nchanged = { text = "Another." }\n'
    lane = stub.open_lane(load_script_file(write(tmp_path, text), "changed"))
    workers = [[{"role": "user", "content": f"Write the part '{part}'"}] for part in ("a", "b", "c")]
    # Three workers asked once each: none of them is another worker asked again.
    assert [content(ask(lane, w)) for w in workers] == ["A paragraph."] * 3
    # The second worker asked again changes its mind; the first and third are still on their first ask.
    assert content(ask(lane, workers[1])) == "Another."
    calls = lane.model_calls("inv_1")
    assert [(c.turn, c.ask) for c in calls] == [(1, 1), (1, 1), (1, 1), (1, 2)]
    assert len({c.asked for c in calls}) == 3 and calls[1].asked == calls[3].asked
    # What a crash added is that one call asked again, not the workers after the first.
    assert extra_calls(calls) == [calls[3]]


def test_a_call_asked_again_with_another_prompt_is_stillasked_again() -> None:
    from paidtwice.stub import ModelCall
    from paidtwice.stub._scripts import Answer
    from paidtwice.sweep._paid import asked_again

    def call(turn: int, asked: str, at: float) -> ModelCall:
        return ModelCall("lane", "inv", 0, turn, 1, 1, Answer(text="x"), at, at, True, asked=asked)

    plan, w1, w2, w3 = call(1, "plan", 1), call(2, "w1", 2), call(2, "w2", 0), call(2, "w3", 0)
    # Sequential workers, killed after the first answered: the plan and worker 1 are asked again, workers 2
    # and 3 for the first time.
    assert asked_again([plan, w1], [plan, w1, w2, w3]) == 2
    # A prompt with the time in it changes between attempts: the replay's call is the answered one again.
    assert asked_again([call(1, "12:00:01", 1)], [call(1, "12:00:05", 5)]) == 1
    # ... and each retry that asks again counts.
    assert asked_again([plan], [plan, plan]) == 2
    # Two one-message questions are both turn 1 of a positional script: killed after the first answered,
    # the replay asks it again and then the second for the first time, which the clean run asked as well.
    tags, summary = call(1, "", 1), call(1, "", 0)
    assert asked_again([tags], [tags, summary], clean_turns=[1, 1]) == 1
    assert asked_again([tags], [tags, tags, summary], clean_turns=[1, 1]) == 2  # and each retry counts


def test_a_call_asked_again_with_another_prompt_is_an_extra_cost() -> None:
    from paidtwice.lab import extra_calls
    from paidtwice.stub import ModelCall
    from paidtwice.stub._scripts import Answer

    def call(turn: int, asked: str) -> ModelCall:
        return ModelCall("lane", "inv", 0, turn, 1, 1, Answer(text="x"), 0.0, 0.0, True, asked=asked)

    first, again = call(1, "12:00:01"), call(1, "12:00:05")
    # The clean run asked turn 1 once: its second first answer is the crash's.
    assert extra_calls([first, again], clean_turns=[1]) == [again]
    # Three workers of one turn, as the clean run asked them: none is extra.
    workers = [call(2, "w1"), call(2, "w2"), call(2, "w3")]
    assert extra_calls(workers, clean_turns=[2, 2, 2]) == []
    # Two one-message questions of a positional script (both turn 1), as the clean run asked them: neither
    # is extra; asked again after a kill, the third turn-1 answer is.
    tags, summary, tags_again = call(1, ""), call(1, ""), call(1, "")
    assert extra_calls([tags, summary], clean_turns=[1, 1]) == []
    assert extra_calls([tags, tags_again, summary], clean_turns=[1, 1]) == [summary]
    # Without the clean run's turns (deck, run, soak), a positional turn keeps its first answer only.
    assert extra_calls([tags, summary]) == [summary]
