"""paidtwice lint on its corpus, on the deck's agent, and through its command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support import DEADLINE

import paidtwice.agent.weather as weather
from paidtwice._words import count
from paidtwice.lint import CODES, lint_paths, lint_source

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
CORPUS_PT006 = HERE / "corpus_pt006"
BROKEN = HERE / "corpus_bad" / "broken.py"
EXPECT = re.compile(r"#.*\bexpect:\s*(?P<codes>PT\d{3}(?:\s*,\s*PT\d{3})*)")


def expected_findings(corpus: Path = CORPUS) -> set[tuple[str, int, str]]:
    expected = set()
    for path in sorted(corpus.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = EXPECT.search(line)
            if match:
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    expected.add((str(path.relative_to(corpus)), number, code))
    return expected


def test_corpus_is_large_and_covers_every_kind() -> None:
    files = list(CORPUS.rglob("*.py"))
    assert len(files) >= 30
    kinds = {code for _, _, code in expected_findings() | expected_findings(CORPUS_PT006)}
    assert kinds == set(CODES) - {"PT000"}


def test_precision_and_recall_on_the_corpus_are_total() -> None:
    result = lint_paths([CORPUS])
    found = {(str(Path(f.path).relative_to(CORPUS)), f.line, f.code) for f in result.findings}
    expected = expected_findings()
    missed = sorted(expected - found)
    spurious = sorted(found - expected)
    assert not missed and not spurious, f"missed {missed}\nspurious {spurious}"
    assert result.handlers > 30


def test_pt006_is_off_by_default_and_total_on_its_corpus_when_selected() -> None:
    assert not [f for f in lint_paths([CORPUS_PT006]).findings if f.code == "PT006"]
    result = lint_paths([CORPUS_PT006], select=["PT006"])
    found = {(str(Path(f.path).relative_to(CORPUS_PT006)), f.line, f.code) for f in result.findings}
    assert found == expected_findings(CORPUS_PT006)
    assert any("charge() calls httpx.AsyncClient.post" in f.message for f in result.findings)
    # The default corpus's actions write without keys too (run_action_named.py); PT006 alone reports them.
    assert {f.code for f in lint_paths([CORPUS], select=["PT006"]).findings} <= {"PT006"}


def test_cli_select_pt006() -> None:
    done = run_cli("--select", "PT006", str(CORPUS_PT006))
    assert done.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in done.stdout.splitlines()] == ["PT006"] * 4
    assert run_cli(str(CORPUS_PT006)).returncode == 0
    bad = run_cli("--select", "PT999", str(CORPUS_PT006))
    assert bad.returncode == 2 and "PT999" in bad.stderr and "Traceback" not in bad.stderr


def test_deck_agent_reports_exactly_the_naive_model_call() -> None:
    path = Path(weather.__file__)
    lines = path.read_text().splitlines()
    naive = [n for n, line in enumerate(lines, start=1) if "# lint: naive-model-call" in line]
    assert len(naive) == 1
    result = lint_paths([path])
    assert [(f.line, f.code) for f in result.findings] == [(naive[0], "PT001")]
    assert "chat()" in result.findings[0].message


def test_a_file_that_does_not_parse_is_reported_and_the_run_goes_on() -> None:
    result = lint_paths([BROKEN, CORPUS / "net_httpx_direct.py"])
    parse = [f for f in result.findings if f.code == "PT000"]
    assert [(f.path, f.line) for f in parse] == [(str(BROKEN), 5)]
    assert any(f.code == "PT001" and f.path.endswith("net_httpx_direct.py") for f in result.findings)


def test_a_call_deep_in_helpers_names_its_place_once() -> None:
    source = (
        "import httpx, restate\n"
        "svc = restate.Service('S')\n"
        "def ask():\n"
        "    return httpx.get('https://model.example')\n"
        "def loop():\n"
        "    return ask()\n"
        "@svc.handler()\n"
        "async def run(ctx: restate.Context) -> None:\n"
        "    loop()\n"
    )
    (finding,) = lint_source(source, "agent.py")
    assert finding.message.endswith("loop() calls ask() calls httpx.get (agent.py:4) in handler run()")


def test_lint_source_resolves_aliases_in_one_module() -> None:
    source = (
        "import restate\nfrom time import time as now\nsvc = restate.Service('s')\n"
        "@svc.handler()\nasync def h(ctx: restate.Context) -> float:\n    return now()\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(6, "PT002")]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "lint", *args], capture_output=True, text=True, timeout=DEADLINE
    )


def test_cli_prints_one_finding_a_line_and_exits_1() -> None:
    done = run_cli(str(CORPUS / "clock_time.py"))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    expected = sorted(n for f, n, _ in expected_findings() if f == "clock_time.py")
    assert [int(line.split(":")[1]) for line in lines] == expected
    assert all(re.match(r".+:\d+:\d+: PT002 ", line) for line in lines)
    # The summary's nouns fit their numbers: one file here.
    result = lint_paths([CORPUS / "clock_time.py"])
    findings, handlers = count(len(result.findings), "finding"), count(result.handlers, "Restate handler")
    assert done.stderr.strip().splitlines()[-1] == f"{findings} in 1 file, {handlers}"


def test_cli_json_has_every_finding_with_its_fix() -> None:
    done = run_cli("--format", "json", str(CORPUS))
    assert done.returncode == 1
    records = json.loads(done.stdout)
    assert len(records) == len(expected_findings())
    assert all(r["fix"] == CODES[r["code"]].fix for r in records)


def test_cli_exits_0_when_clean_and_2_on_bad_input(tmp_path: Path) -> None:
    assert run_cli(str(CORPUS / "outside_handler.py")).returncode == 0
    missing = run_cli(str(tmp_path / "nope.py"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"Error: no such file or directory: {tmp_path / 'nope.py'}"
    ]
    assert run_cli().returncode == 2
    assert "Traceback" not in missing.stderr
    # A file that is not Python (a script file given by mistake) is named, not reported as unparsable code.
    script = tmp_path / "script.toml"
    script.write_text('[[turn]]\ntext = "Hello."\n')
    wrong = run_cli(str(script))
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        f"Error: {script} is neither a Python file (a .py file, or a script whose first line runs python) "
        "nor a TypeScript file (.ts, .tsx, .mts, .cts)"
    ]
    # A script with a python shebang is one (pre-commit passes them as Python files).
    tool = tmp_path / "deploy"
    tool.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    assert run_cli(str(tool)).returncode == 0


def test_explicit_recovery_handler_is_told_its_journaled_model_call_is_paid_again() -> None:
    source = (
        "import restate\n"
        "from openai import AsyncOpenAI\n"
        "from restate._preview import explicit_recovery\n"
        "client = AsyncOpenAI()\n"
        "svc = restate.Service('S')\n"
        "async def ask(q):\n"
        "    return await client.chat.completions.create(model='m', messages=[])\n"
        "@svc.handler()\n"
        "async def run(ctx: restate.Context, q: str):\n"
        "    return await ctx.run_typed('model', ask, q=q)\n"
    )
    assert lint_source(source) == []
    findings = lint_source(source + "explicit_recovery(svc)\n")
    assert [(f.line, f.code) for f in findings] == [(10, "PT007")]
    assert "explicit_recovery handler" in findings[0].message and "ask() calls" in findings[0].message
    assert "paid again after every kill or failure" in findings[0].fix
