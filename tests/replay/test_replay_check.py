"""`paidtwice replay-check` on journals captured from the real server (tests/fixtures/journals/, refreshed
by scripts/capture_journals.py), against the deck's agent in both modes, and its bad inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import DEADLINE

from paidtwice.replay import load_journal

JOURNALS = Path(__file__).parents[1] / "fixtures" / "journals"
CHANGED = JOURNALS / "naive-changed-for-good.json"
CLEAN = JOURNALS / "clean.json"
DECK_APP = "paidtwice.agent.weather:app"


def check(
    paths: list[Path], *, mode: str, script: str = "steady", service: str | None = None
) -> tuple[int, list[dict[str, Any]]]:
    """Run `paidtwice replay-check --json -` on the deck's agent in `mode`, serving the journals' service."""
    done = replay_check(paths, "--json", "-", mode=mode, script=script, service=service)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    records: list[dict[str, Any]] = json.loads(done.stdout)
    return done.returncode, records


def replay_check(
    paths: list[Path], *args: str, mode: str, script: str = "steady", service: str | None = None
) -> subprocess.CompletedProcess[str]:
    service = service or load_journal(paths[0]).service
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", "--app", DECK_APP, "--script", script]
        + [str(p) for p in paths]
        + list(args),
        capture_output=True,
        text=True,
        env={**os.environ, "PAIDTWICE_AGENT_MODE": mode, "PAIDTWICE_SERVICE": service},
        timeout=DEADLINE,
    )


def test_changed_for_good_against_the_journaled_fix_diverges_at_1() -> None:
    code, [record] = check([CHANGED], mode="journaled")
    assert code == 1
    assert record["verdict"] == "diverges" and (record["index"], record["command_index"]) == (1, 1)
    assert (record["recorded"], record["attempted"]) == ("run weather", "run model")
    assert record["labels_agree"] is True
    assert "name: weather != model" in record["message"]
    assert record["outside_calls"] == []


def test_changed_for_good_against_naive_code_with_changed_answers_diverges_at_1() -> None:
    code, [record] = check([CHANGED], mode="naive", script="changed")
    assert code == 1
    assert record["verdict"] == "diverges" and record["index"] == 1
    assert (record["recorded"], record["attempted"]) == ("run weather", "handler return")
    assert record["calls_during_replay"] == 1
    [call] = record["outside_calls"]
    assert (call["turn"], call["ask"], call["during_replay"]) == (1, 2, True)


def test_changed_for_good_against_naive_code_with_steady_answers_continues() -> None:
    code, [record] = check([CHANGED], mode="naive", script="steady")
    assert code == 0
    assert record["verdict"] == "continues"
    assert record["calls_during_replay"] == 1
    # The journal ends after the pause: the second model call is past its end, the output comes next.
    assert [c["during_replay"] for c in record["outside_calls"]] == [True, False]
    assert record["next_command"] == "output"


def test_a_complete_journal_replays_and_a_changed_output_diverges() -> None:
    code, [record] = check([CLEAN], mode="naive")
    assert code == 0 and record["verdict"] == "replays"
    assert record["calls_during_replay"] == 2
    # Other words in the final answer: the recorded output is not what the code returns.
    code, [record] = check([CLEAN], mode="naive", script="drifting")
    assert code == 1 and record["verdict"] == "diverges"
    assert record["recorded"] == "output" and "handler return" in record["attempted"]


def test_a_prefix_stops_before_a_step_runs_past_the_end(tmp_path: Path) -> None:
    from paidtwice.replay import save_journal

    clean = load_journal(CLEAN)
    # Input and the weather step's command, no result: the replay would run the step again.
    in_flight = save_journal(tmp_path / "in-flight.json", clean.prefix(1))
    code, [record] = check([in_flight], mode="naive", service=clean.service)
    assert code == 0 and record["verdict"] == "continues"
    assert record["next_command"].startswith("run weather (again")
    assert "stopped before step 'weather' executed" in record["past_end"]


def one_line_error(args: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def edited(tmp_path: Path, **changes: Any) -> Path:
    data = json.loads(CHANGED.read_text())
    data.update(changes)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not JSON"),
        ('{"format": "something-else"}', "is not a paidtwice journal"),
        (b"\xff\xfe\x00", "is not text"),
    ],
)
def test_corrupt_journal_file(tmp_path: Path, content: str | bytes, expected: str) -> None:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    assert expected in one_line_error(["--app", DECK_APP, str(path)])


@pytest.mark.parametrize("raw", ["not base64!", "AAé="])
def test_journal_with_a_broken_entry(tmp_path: Path, raw: str) -> None:
    data = json.loads(CHANGED.read_text())
    data["entries"][1]["raw"] = raw
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    assert "raw is not base64" in one_line_error(["--app", DECK_APP, str(path)])


def test_journal_of_another_service() -> None:
    line = one_line_error(["--app", DECK_APP, str(CHANGED)], env={"PAIDTWICE_SERVICE": "Other"})
    assert "is a journal of service" in line and "services: Other" in line


def test_app_that_does_not_import() -> None:
    line = one_line_error(["--app", "no_such_module_here:app", str(CHANGED)])
    assert "cannot import no_such_module_here" in line


def test_handler_the_app_does_not_have(tmp_path: Path) -> None:
    path = edited(tmp_path, handler="nope")
    service = load_journal(CHANGED).service
    line = one_line_error(["--app", DECK_APP, str(path)], env={"PAIDTWICE_SERVICE": service})
    assert "has no handler 'nope'" in line


def test_protocol_version_the_sdk_does_not_speak(tmp_path: Path) -> None:
    path = edited(tmp_path, protocol_version=4)
    service = load_journal(CHANGED).service
    line = one_line_error(["--app", DECK_APP, str(path)], env={"PAIDTWICE_SERVICE": service})
    assert "service protocol v4, which restate-sdk does not speak" in line


def test_the_deck_agent_by_its_mode_is_the_target_the_sweep_builds() -> None:
    """`--mode` replays on the deck's agent as `sweep --mode` builds it (a `DeckTarget`): its mode is the
    target's environment, over the process's own (journaled there, where the clean journal diverges)."""
    service = load_journal(CLEAN).service
    env = {**os.environ, "PAIDTWICE_AGENT_MODE": "journaled", "PAIDTWICE_SERVICE": service}
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", "--mode", "naive", str(CLEAN), "--json", "-"],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    [by_mode] = json.loads(done.stdout)
    _, [by_app] = check([CLEAN], mode="naive")
    assert by_mode["verdict"] == by_app["verdict"] == "replays"
    assert by_mode["calls_during_replay"] == by_app["calls_during_replay"] == 2


def test_assert_replays_takes_the_deck_agent_as_a_target() -> None:
    """The pytest helper takes the same target, its mode set while it replays and put back after (in a
    process of its own: the deck's agent reads its mode when imported)."""
    code = (
        "import os, sys\n"
        "from paidtwice.targets import DeckTarget\n"
        "from paidtwice.testing import assert_replays\n"
        "[result] = assert_replays(DeckTarget('naive'), [sys.argv[1]])\n"
        "print(result.verdict, os.environ.get('PAIDTWICE_AGENT_MODE'))\n"
    )
    env = {
        **os.environ,
        "PAIDTWICE_AGENT_MODE": "journaled",
        "PAIDTWICE_SERVICE": load_journal(CLEAN).service,
    }
    done = subprocess.run(
        [sys.executable, "-c", code, str(CLEAN)], capture_output=True, text=True, env=env, timeout=DEADLINE
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["replays", "journaled"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--cmd", "node agent.ts"], "a deployment started by a command cannot be replayed offline"),
        ([], "give the code to replay on: --app MODULE[:APP], --cmd CMD, or --mode"),
        (["--app", DECK_APP, "--cmd", "node agent.ts"], "give --app or --cmd, not both"),
        (["--app", DECK_APP, "--mode", "naive"], "--mode goes with the deck's agent"),
    ],
)
def test_the_code_replayed_is_one_target(args: list[str], says: str) -> None:
    assert says in one_line_error([*args, str(CLEAN)])


def test_no_journals(tmp_path: Path) -> None:
    assert "no journal files" in one_line_error(["--app", DECK_APP, str(tmp_path)])
    assert "no such file" in one_line_error(["--app", DECK_APP, str(tmp_path / "missing.json")])


def test_json_takes_a_file_and_dash_is_stdout(tmp_path: Path) -> None:
    out = tmp_path / "records.json"
    written = replay_check([CLEAN], "--json", str(out), mode="naive")
    assert written.returncode == 0, written.stderr
    # The table is still printed; the file holds what `--json -` prints.
    assert "clean.json  replays" in written.stdout and f"Full records: {out}" in written.stdout
    printed = replay_check([CLEAN], "--json", "-", mode="naive")
    assert printed.returncode == 0 and "replays" not in printed.stdout.split("[", 1)[0]
    [on_file], [on_stdout] = json.loads(out.read_text()), json.loads(printed.stdout)
    # Only the stub's port may differ between two runs.
    assert {k: v for k, v in on_file.items() if k != "outside_calls"} == {
        k: v for k, v in on_stdout.items() if k != "outside_calls"
    }
    assert on_file["verdict"] == "replays" and len(on_file["outside_calls"]) == 2


@pytest.mark.parametrize("where", ["end", "before an option"])
def test_the_flag_form_still_prints_and_says_so(where: str) -> None:
    args = ["--json"] if where == "end" else ["--json", "--timeout", "30"]
    done = replay_check([CLEAN], *args, mode="naive")
    assert done.returncode == 0, done.stderr
    assert [r["verdict"] for r in json.loads(done.stdout)] == ["replays"]
    [said] = done.stderr.splitlines()
    assert "--json now takes a file" in said and "--json -" in said


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("journal", "it is a journal"),
        ("directory", "it is a directory"),
        ("under the journals", "it is read for journals"),
    ],
)
def test_json_never_writes_over_an_input(tmp_path: Path, target: str, says: str) -> None:
    # The flag form followed by the journals (`--json journals/`) hands --json the input: refused, untouched.
    journals = tmp_path / "journals"
    journals.mkdir()
    journal = journals / "clean.json"
    journal.write_bytes(CLEAN.read_bytes())
    given = {"journal": journal, "directory": journals, "under the journals": journals / "out.json"}[target]
    env = {"PAIDTWICE_AGENT_MODE": "naive", "PAIDTWICE_SERVICE": load_journal(CHANGED).service}
    line = one_line_error(["--app", DECK_APP, "--json", str(given), str(journals)], env=env)
    assert f"not writing the records over {given}: {says}" in line and "--json -" in line
    assert journal.read_bytes() == CLEAN.read_bytes()
    assert sorted(p.name for p in journals.iterdir()) == ["clean.json"]


def test_a_module_without_app_is_found_as_the_sweep_finds_it() -> None:
    # The deck's module holds one Restate app: MODULE alone is that app, with the same verdicts.
    by_name = replay_check([CHANGED], "--json", "-", mode="journaled")
    found = subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", "--app", DECK_APP.partition(":")[0]]
        + [str(CHANGED), "--json", "-"],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PAIDTWICE_AGENT_MODE": "journaled",
            "PAIDTWICE_SERVICE": load_journal(CHANGED).service,
        },
        timeout=DEADLINE,
    )
    assert found.returncode == by_name.returncode, found.stderr
    verdicts = [(r["invocation_id"], r["verdict"]) for r in json.loads(found.stdout)]
    assert verdicts == [(r["invocation_id"], r["verdict"]) for r in json.loads(by_name.stdout)]
    assert [verdict for _, verdict in verdicts] == ["diverges"]


def test_a_module_with_two_apps_or_none_is_one_line() -> None:
    here = str(Path(__file__).parent)
    line = one_line_error(["--app", "two_apps", "--app-dir", here, str(CLEAN)])
    assert line.endswith("module two_apps holds 2 Restate apps (app, admin_app): name one, two_apps:APP"), (
        line
    )
    line = one_line_error(["--app", "json", str(CLEAN)])
    assert line.endswith("module json defines no Restate service (name the app: json:APP)"), line
