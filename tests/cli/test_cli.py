"""The command line: help everywhere, and one clear line with exit 2 for bad input."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support import DEADLINE

from paidtwice.cli import cli
from paidtwice.lab import Lab
from paidtwice.results import RunRecord
from paidtwice.sweep import KillPlan


def commands() -> list[str]:
    return sorted(cli.commands)


@pytest.mark.parametrize("name", commands())
def test_every_command_has_help_with_an_example(name: str) -> None:
    command = cli.commands[name]
    assert command.help and command.help.strip()
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output


def one_line_error(args: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 or not any("Traceback" in line for line in lines), done.stderr
    assert "Traceback" not in done.stderr
    return lines[-1]


def test_unknown_experiment() -> None:
    assert "no experiment named 'nope'" in one_line_error(["run", "nope"])


def test_admin_url_with_no_server() -> None:
    line = one_line_error(["journal", "inv_1abc", "--admin-url", "http://127.0.0.1:9"])
    assert "no Restate admin API answers at http://127.0.0.1:9" in line


def test_unknown_invocation_id(lab: Lab, deck_records: dict[str, RunRecord]) -> None:
    # A well-formed id this server never had: one captured on another server.
    captured = json.loads((Path(__file__).parents[1] / "fixtures" / "clean.json").read_text())
    unknown = captured["invocation_id"]
    assert unknown not in {r.invocation_id for r in deck_records.values()}
    for command in ("journal", "explain"):
        line = one_line_error([command, unknown, "--admin-url", lab.server.admin_url])
        assert f"no invocation {unknown}" in line


def test_malformed_invocation_id(lab: Lab) -> None:
    line = one_line_error(["journal", "x'; drop", "--admin-url", lab.server.admin_url])
    assert "is not an invocation id" in line
    line = one_line_error(["journal", "inv_1doesnotexist", "--admin-url", lab.server.admin_url])
    assert "not a valid Restate invocation id" in line


def test_server_that_cannot_start(tmp_path: Path) -> None:
    # A restate-server binary that fails at once, where paidtwice's cache keeps the real one.
    from paidtwice.engine._provision import server_binary_path

    fake = server_binary_path("1.7.12", root=tmp_path)
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'cannot open data directory' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    line = one_line_error(["run", "clean"], env={"PAIDTWICE_CACHE": str(tmp_path), "TMPDIR": str(tmp)})
    assert "restate-server exited with status 3" in line
    assert "cannot open data directory" in line
    # The server's data directory, the lab's work directory and its port locks are gone with it.
    assert [p.name for p in tmp.iterdir()] == []


def test_bad_input_is_a_click_error_with_exit_2() -> None:
    from paidtwice.cli._bad_input import BadInput

    assert issubclass(BadInput, click.ClickException) and BadInput.exit_code == 2


def test_recover_bad_input(lab: Lab, deck_records: dict[str, RunRecord]) -> None:
    url = lab.server.admin_url
    completed = deck_records["clean"].invocation_id
    assert "is completed" in one_line_error(["recover", completed, "--admin-url", url])
    paused = deck_records["naive-changed-for-good"].invocation_id
    line = one_line_error(["recover", paused, "--apply", "teleport", "--admin-url", url])
    assert "'teleport' is not a way out" in line
    assert "not a valid Restate invocation id" in one_line_error(["recover", "inv_1nope", "--admin-url", url])


def test_explain_an_invocation_with_no_failure(lab: Lab, deck_records: dict[str, RunRecord]) -> None:
    clean = deck_records["clean"].invocation_id
    line = one_line_error(["explain", clean, "--admin-url", lab.server.admin_url])
    assert f"invocation {clean} (completed) has no recorded failure" in line


def test_soak_bad_input() -> None:
    assert "'--invocations': 0 is not in the range x>=1" in one_line_error(["soak", "--invocations", "0"])
    assert "'--timeout': 0.0 is not in the range x>=1.0" in one_line_error(["soak", "--timeout", "0"])
    # Refused before anything starts, not after a soak of many minutes whose record then had nowhere to go.
    said = one_line_error(["soak", "--json", "/proc/paidtwice/soak.json"])
    assert said.startswith("Error: cannot write the soak's record to /proc/paidtwice/soak.json"), said
    over = one_line_error(
        ["soak", "--json", "/tmp/paidtwice-same.json", "--html", "/tmp/paidtwice-same.json"]
    )
    assert "not writing the HTML report over /tmp/paidtwice-same.json" in over
    assert "3 to 7 nodes, not 100" in one_line_error(["soak", "--cluster", "100"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--app", "agent:app", "--cmd", "node agent.ts"], "give --app or --cmd, not both"),
        (["--cwd", "."], "--cwd goes with --cmd"),
        (["--service", "Agent"], "--service, --handler and --variation go with --app or --cmd"),
        (["--key", "k"], "--key goes with --app or --cmd"),
        (
            ["--cmd", "node agent.ts", "--script", "a.toml", "--script", "b.toml"],
            "with --cmd, give one script file (--script FILE) or none (auto answers)",
        ),
        (
            [
                "--app",
                "a:app",
                "--service",
                "A",
                "--handler",
                "h",
                "--script",
                "s.toml",
                "--write-script",
                "w.toml",
            ],
            "--write-script writes auto answers: it goes with --app or --cmd and no --script FILE",
        ),
        (["--write-script", "w.toml"], "--write-script writes auto answers"),
        (
            ["--app", "agent:app", "--script", "script.toml", "--handler", "run"],
            "--handler run: name its service (--handler SERVICE/run, or --service)",
        ),
        (
            ["--cmd", "node agent.ts", "--handler", "run"],
            "--handler run: name its service (--handler SERVICE/run, or --service)",
        ),
        (["--resolve", "true"], "--resolve goes with --app or --cmd"),
        (["--shard", "3/2"], "--shard 3/2: expected K/N with 1 <= K <= N"),
        (
            ["--app", "agent:app", "--script", "s.toml", "--service", "A", "--handler", "h", "--input", "{"],
            "--input is not JSON: ",
        ),
    ],
)
def test_sweep_bad_input(args: list[str], message: str) -> None:
    # Refused before anything starts: no server, no agent.
    assert message in one_line_error(["sweep", *args])


def test_every_field_of_the_sweep_s_kill_plan_is_an_option() -> None:
    # A field left without its option is a default the user cannot change (--retries, then --shard, were).
    options = {param.name for param in cli.commands["sweep"].params}
    assert {field.name for field in dataclasses.fields(KillPlan)} <= options


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["run", "clean", "--json", "{file}/deck.json"], {}, "cannot write the records to {file}/deck.json"),
        (
            ["run", "clean"],
            {"PAIDTWICE_RESULTS": "{file}/results"},
            "cannot write the records to {file}/results/",
        ),
        (["deck", "--html", "{file}/deck.html"], {}, "cannot write the HTML report to {file}/deck.html"),
        (["sweep", "--save-journals", "{file}/journals"], {}, "cannot write the journals to {file}/journals"),
        (
            ["sweep", "--app", "agent:app", "--service", "A", "--handler", "h", "--script", "s.toml"]
            + ["--app-dir", "{file}/app"],
            {},
            "--app-dir {file}/app is not a directory",
        ),
    ],
)
def test_a_place_results_cannot_go_is_refused_before_anything_runs(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    # A file where a directory must be: nothing can be written under it. Refused in one line before a
    # server starts (it used to be a traceback, after the runs for --html).
    afile = tmp_path / "a-file"
    afile.write_text("")
    line = one_line_error(
        [a.format(file=afile) for a in args], env={k: v.format(file=afile) for k, v in env.items()}
    )
    assert message.format(file=afile) in line, line
    assert line.endswith(
        (f"{afile} is a file, not a directory", ": Not a directory", " is not a directory")
    ), line


def test_report_to_a_place_it_cannot_write(tmp_path: Path) -> None:
    results = Path(__file__).parents[1] / "fixtures" / "results" / "sweep.json"
    (tmp_path / "a-file").write_text("")
    line = one_line_error(["report", str(results), "-o", str(tmp_path / "a-file" / "r.html")])
    assert f"cannot write the HTML report to {tmp_path / 'a-file' / 'r.html'}: " in line


def test_provision_says_what_each_path_is() -> None:
    # What scripts/setup.sh prints: the server's path on stdout (read by the script), every other line
    # in words, never a path on its own line.
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "provision"], capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).name == "restate-server"
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and all(not line.startswith("/") for line in lines), lines
    assert any(line.startswith("paidtwice: restatectl installed at /") for line in lines), lines
    assert any(line.startswith("paidtwice: Node.js installed at /") for line in lines), lines
