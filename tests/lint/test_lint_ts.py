"""paidtwice lint on TypeScript: the corpus of agents written as Restate's TypeScript examples are (each
journaled, and a naive copy), the project's TypeScript agent, and every output (text, JSON, SARIF, JUnit,
GitHub annotations, `paidtwice check`'s lint step)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
from junitparser import JUnitXml
from support import DEADLINE, run_paidtwice

from paidtwice.lint import lint_paths

HERE = Path(__file__).parent
CORPUS = HERE / "corpus_ts"
ROOT = HERE.parent.parent
TS_AGENT = ROOT / "examples" / "ts_agent" / "agent.ts"
SWEPT = ROOT / "tests" / "ts_corpus" / "src"  # the agents the sweep's tests run, linted where they are
DURABLE = ROOT / "tests" / "sweep" / "ts_durable"  # Restate's template on durableCalls, and its naive twin
SARIF_SCHEMA = ROOT / "tests" / "check" / "sarif-schema-2.1.0.json"
EXPECT = re.compile(r"//.*\bexpect:\s*(?P<codes>PT\d{3}(?:\s*,\s*PT\d{3})*)")
PAUSE = 'onJournalMismatchErrors: "pause"'


def expected_findings(corpus: Path = CORPUS) -> set[tuple[str, int, str]]:
    expected = set()
    for path in sorted(corpus.rglob("*.ts")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = EXPECT.search(line)
            if match:
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    expected.add((str(path.relative_to(corpus)), number, code))
    return expected


def _unnumbered(text: str) -> str:
    return re.sub(r"line \d+", "line N", re.sub(r":\d+:\d+:", ":N:N:", text))


def agents() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.ts") if not p.stem.endswith("_naive"))


def test_every_journaled_agent_has_a_naive_copy() -> None:
    journaled = agents()
    assert len(journaled) >= 10
    for agent in journaled:
        assert (CORPUS / f"{agent.stem}_naive.ts").is_file(), agent


def test_precision_and_recall_on_the_ts_corpus_are_total() -> None:
    result = lint_paths([CORPUS])
    found = {(str(Path(f.path).relative_to(CORPUS)), f.line, f.code) for f in result.findings}
    expected = expected_findings()
    missed = sorted(expected - found)
    spurious = sorted(found - expected)
    assert not missed and not spurious, f"missed {missed}\nspurious {spurious}"
    assert not result.undecided, result.undecided
    # Every naive copy is flagged at its model call, no journaled agent at all.
    flagged = {Path(f.path).name for f in result.findings}
    assert flagged == {f"{a.stem}_naive.ts" for a in agents()}
    assert {code for _, _, code in expected} == {"PT001", "PT002", "PT003", "PT004", "PT005"}
    assert result.handlers >= 25


def test_the_swept_corpus_is_flagged_at_its_naive_model_calls_only() -> None:
    """The TypeScript agents tests/sweep sweeps with `--cmd` (tests/ts_corpus): each naive copy at every
    model call it moved out of ctx.run, its journaled agent nowhere; as the sweep finds them paying twice."""
    result = lint_paths([SWEPT])
    found = {(str(Path(f.path).relative_to(SWEPT)), f.line, f.code) for f in result.findings}
    assert found == expected_findings(SWEPT) and not result.undecided, result.undecided
    journaled = sorted(p.stem for p in SWEPT.glob("*.ts") if "restate.serve(" in p.read_text())
    journaled = [name for name in journaled if not name.endswith("_naive")]
    assert len(journaled) >= 9
    assert {Path(f.path).stem for f in result.findings} == {f"{name}_naive" for name in journaled}


def test_durable_calls_are_journaled_and_the_naive_twin_is_flagged_at_its_model_call() -> None:
    """The template as Restate ships it (tests/sweep/ts_durable, swept there): the model wrapped with the
    middleware's durableCalls is no finding; without it, generateText() is flagged where the twin says."""
    files = [DURABLE / "agent.ts", DURABLE / "agent_naive.ts"]
    result = lint_paths(files)
    found = {(Path(f.path).name, f.line, f.code) for f in result.findings}
    expected = {
        (path.name, number, "PT001")
        for path in files
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if EXPECT.search(line)
    }
    assert found == expected and not result.undecided, (found, result.undecided)
    assert {name for name, _, _ in found} == {"agent_naive.ts"} and result.handlers == 2
    assert "generateText() with a model outside durableCalls" in result.findings[0].message


def test_a_finding_names_its_handler_and_the_helper_it_goes_through() -> None:
    findings = {(Path(f.path).name, f.line): f for f in lint_paths([CORPUS]).findings}
    through = findings[("multi_agent_naive.ts", 12)].message
    assert "generateText() with a model outside durableCalls" in through
    assert "in handler MultiAgentClaimApproval/run (through runEligibilityAgent() at line 39)" in through
    imported = findings[("template_naive.ts", 25)].message
    assert "llmCall() calls generateText() with a model outside durableCalls (llm.ts:9)" in imported
    assert "in handler agent/run" in imported
    # A service that already pauses on a journal mismatch is not told to.
    assert PAUSE in through and PAUSE not in findings[("human_approval_naive.ts", 9)].message
    assert PAUSE not in findings[("clock_random_env_naive.ts", 12)].message


def test_a_handler_is_named_by_its_service_however_the_code_names_the_service(tmp_path: Path) -> None:
    """Services named by a factory's parameter (remote_agents_naive.ts's specialists, one per call), by a
    constant, by a template literal, defined inside the array `restate.serve` is given: each handler is
    named SERVICE/HANDLER as the server registers it, never `?`."""
    result = lint_paths([SWEPT / "remote_agents_naive.ts"])
    assert not [f.message for f in result.findings if "?/" in f.message]
    assert any("in handlers Billing/reply and Security/reply;" in f.message for f in result.findings)
    assert result.handlers == 3  # Router/route, and reply in each specialist
    app = tmp_path / "agents.ts"
    fetch = 'async (ctx: restate.Context) => { await fetch("https://example.com"); }'
    app.write_text(
        'import * as restate from "@restatedev/restate-sdk";\n'
        'const PLANNER = "Planner" as const;\n'
        "export const worker = (name: string) =>\n"
        f"  restate.service({{ name, handlers: {{ run: {fetch} }} }});\n"
        "restate.serve({ services: [\n"
        f"  restate.service({{ name: PLANNER, handlers: {{ plan: {fetch} }} }}),\n"
        f"  restate.service({{ name: `Checker`, handlers: {{ check: {fetch} }} }}),\n"
        '  worker("Worker"),\n'
        "] });\n"
    )
    found = lint_paths([app])
    named = {f.message.split(" in handler ")[-1] for f in found.findings}
    assert named == {"Worker/run", "Planner/plan", "Checker/check"}, [f.message for f in found.findings]


def test_the_ts_agent_is_flagged_once_at_its_naive_model_call() -> None:
    result = lint_paths([TS_AGENT])
    [finding] = result.findings
    lines = TS_AGENT.read_text().splitlines()
    assert finding.code == "PT001"
    assert "openai.chat.completions.create(" in lines[finding.line - 1]
    called = next(n for n, line in enumerate(lines, 1) if ": await chat(messages);" in line)
    assert f"in handler agent/run (through chat() at line {called})" in finding.message
    assert result.handlers == 1 and result.files == 1
    # As docs/how-to/lint.md shows it.
    shown = run_paidtwice("lint", "examples/ts_agent/agent.ts", cwd=ROOT)
    assert shown.returncode == 1
    assert shown.stdout.splitlines() == [finding.format().replace(str(ROOT) + "/", "")]
    # Line numbers aside (the agent is edited for other reasons), the docs show this output.
    docs = (ROOT / "docs" / "how-to" / "lint.md").read_text()
    assert _unnumbered(shown.stdout.strip()) in _unnumbered(docs)


def test_noqa_and_a_file_that_does_not_parse(tmp_path: Path) -> None:
    naive = (CORPUS / "fetch_provider_naive.ts").read_text()
    (tmp_path / "quiet.ts").write_text(naive.replace("// expect: PT001", "// noqa: PT001"))
    (tmp_path / "broken.ts").write_text('import * as restate from "@restatedev/restate-sdk";\nconst x = {;\n')
    (tmp_path / "types.d.ts").write_text("declare const x: number = ;\n")  # declarations are not read
    result = lint_paths([tmp_path])
    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [("broken.ts", 2, "PT000")]
    assert result.files == 2


def test_cli_text_json_github_sarif_and_junit(tmp_path: Path) -> None:
    done = run_paidtwice(
        "lint", str(CORPUS), "--format", "github", "--sarif", str(tmp_path / "lint.sarif"),
        "--junit", str(tmp_path / "lint.xml"),
        cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    expected = expected_findings()
    annotation = re.compile(r"^::error file=([^,]+),line=(\d+),col=\d+,title=(PT\d{3}) ", flags=re.M)
    annotations = annotation.findall(done.stdout)
    assert {(Path(f).name, int(n), c) for f, n, c in annotations} == {
        (Path(f).name, n, c) for f, n, c in expected
    }
    log = json.loads((tmp_path / "lint.sarif").read_text())
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    results = log["runs"][0]["results"]
    placed = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].removeprefix(
                "tests/lint/corpus_ts/"
            ),
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"],
        )
        for r in results
    }
    assert placed == expected
    assert JUnitXml.fromfile(str(tmp_path / "lint.xml")).failures >= 1
    text = run_paidtwice("lint", "tests/lint/corpus_ts/template_naive.ts", cwd=ROOT)
    assert text.returncode == 1
    assert text.stdout.startswith("tests/lint/corpus_ts/template_naive.ts:25:26: PT001 ")
    clean = run_paidtwice("lint", str(CORPUS / "template.ts"), "--format", "json", cwd=ROOT)
    assert clean.returncode == 0 and json.loads(clean.stdout) == []


def test_cli_refuses_other_files_and_empty_folders(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# notes\n")
    wrong = run_paidtwice("lint", str(tmp_path / "notes.md"))
    assert wrong.returncode == 2
    assert "is neither a Python file" in wrong.stderr and "nor a TypeScript file" in wrong.stderr
    empty = run_paidtwice("lint", str(tmp_path))
    assert empty.returncode == 2
    assert empty.stderr.strip() == f"Error: no Python or TypeScript files under {tmp_path}"
    assert "Traceback" not in wrong.stderr + empty.stderr


def test_check_lints_typescript(tmp_path: Path) -> None:
    """`paidtwice check --only lint` on a project whose lint paths hold TypeScript agents."""
    shutil.copytree(CORPUS, tmp_path / "agents")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "ts-agents"\nversion = "0"\n\n[tool.paidtwice]\nlint = ["agents"]\n'
    )
    done = run_paidtwice("check", "--only", "lint", "--sarif", "check.sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    log = json.loads((tmp_path / "check.sarif").read_text())
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    results = log["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {f"agents/{a.stem}_naive.ts" for a in agents()}


def test_without_its_parser_typescript_is_not_checked_and_python_still_is() -> None:
    """A Python that lacks tree-sitter (an environment not reinstalled since it became a dependency) still
    runs every command; its TypeScript files are reported as not checked, naming what to install."""
    probe = (
        "import sys; sys.modules['tree_sitter'] = None\n"
        "import paidtwice.cli\n"
        "from pathlib import Path\n"
        "from paidtwice.lint import lint_paths\n"
        f"paths = [Path({str(CORPUS / 'template_naive.ts')!r}), Path({str(HERE / 'corpus')!r})]\n"
        "result = lint_paths(paths)\n"
        "print(len(result.unchecked), len(result.findings) > 0)\n"
        "print(result.unchecked[0][1])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    counts, why = done.stdout.splitlines()
    assert counts == "1 True"
    assert why.startswith("not checked: reading TypeScript needs tree_sitter (pip install tree-sitter==")


def test_pt006_writes_in_ctx_run_without_a_key_when_selected() -> None:
    pt006 = HERE / "corpus_ts_pt006"
    assert lint_paths([pt006]).findings == ()
    result = lint_paths([pt006, CORPUS], select=["PT006"])
    found = {(Path(f.path).name, f.line, f.code) for f in result.findings}
    expected = {(Path(f).name, n, c) for f, n, c in expected_findings(pt006)}
    assert found == expected and len(expected) == 3
    messages = [f.message for f in result.findings]
    assert any("charge() calls fetch() POST (payments.ts:9) in handler Payments/pay" in m for m in messages)


def test_a_model_lint_cannot_follow_is_not_decided_rather_than_reported(tmp_path: Path) -> None:
    agent = tmp_path / "agent.ts"
    agent.write_text(
        'import * as restate from "@restatedev/restate-sdk";\n'
        'import { generateText } from "ai";\n'
        'import { pickModel } from "some-registry";\n'
        "export const svc = restate.service({\n"
        '  name: "S",\n'
        "  handlers: {\n"
        "    run: async (ctx: restate.Context, prompt: string) => {\n"
        "      const model = pickModel(prompt);\n"
        "      return (await generateText({ model, prompt })).text;\n"
        "    },\n"
        "  },\n"
        "});\n"
    )
    result = lint_paths([agent])
    assert result.findings == ()
    assert result.undecided == (
        (
            str(agent),
            9,
            "cannot decide whether generateText()'s model 'model' is journaled (wrapped with durableCalls)",
        ),
    )
