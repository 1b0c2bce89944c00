"""[tool.paidtwice] read strictly: a broken config is one line naming the file, the key and what was expected,
exit 2; paths are relative to the file; `--app MODULE` and the pre-commit hook, without a server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.check import ConfigError, find_config, load_config
from paidtwice.targets import AppTarget
from paidtwice.targets._discovery import discover, needs_input

ROOT = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "project"
TS_CORPUS = ROOT / "tests" / "lint" / "corpus_ts"


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=DEADLINE,
    )


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('[tool.paidtwice]\nlnit = ["src"]\n', "pyproject.toml: tool.paidtwice.lnit: unknown key"),
        (
            '[tool.paidtwice]\nlint = "src"\n',
            "pyproject.toml: tool.paidtwice.lint: expected a list of strings",
        ),
        (
            '[tool.paidtwice.budget]\nrepaid-model-calls = "none"\n',
            "pyproject.toml: tool.paidtwice.budget.repaid-model-calls: expected a non-negative integer, "
            'got a string ("none")',
        ),
        (
            '[[tool.paidtwice.sweep]]\napp = "a:app"\ninput = "not json"\n',
            "pyproject.toml: tool.paidtwice.sweep[0].input: expected JSON",
        ),
        (
            '[[tool.paidtwice.sweep]]\napp = "a:app"\nscirpt = "s.toml"\n',
            "pyproject.toml: tool.paidtwice.sweep[0].scirpt: unknown key",
        ),
        (
            '[[tool.paidtwice.sweep]]\napp = "a:app"\nscript = "s.toml"\nevery-tool = true\n',
            "pyproject.toml: tool.paidtwice.sweep[0].every-tool: expected false beside a script file",
        ),
        (
            '[[tool.paidtwice.sweep]]\nhandler = "run"\n',
            "pyproject.toml: tool.paidtwice.sweep[0].app: expected",
        ),
        ("[tool.paidtwice\n", "pyproject.toml: not valid TOML"),
        (
            '[[tool.paidtwice.sweep]]\napp = "a:app"\nscript = "missing.toml"\n',
            "pyproject.toml: tool.paidtwice.sweep[0].script: no such file",
        ),
    ],
)
def test_a_broken_config_is_one_line_and_exit_2(tmp_path: Path, table: str, named: str) -> None:
    (tmp_path / "pyproject.toml").write_text(table)
    done = check(tmp_path, "--config", "pyproject.toml")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_command_ends_with_nothing_left_for_the_collector(tmp_path: Path) -> None:
    """Its line out, a command exits at once: the interpreter's garbage collection at exit, over everything
    it imported, took seconds of a loaded machine's time after the line (the objects are frozen instead)."""
    (tmp_path / "pyproject.toml").write_text('[tool.paidtwice]\nlnit = ["src"]\n')
    # Registered before paidtwice's own exit handlers, so it runs after them, as the process ends.
    code = (
        "import atexit, gc, sys\n"
        "counts = lambda: print('objects', gc.get_freeze_count(), len(gc.get_objects()), file=sys.stderr)\n"
        "atexit.register(counts)\n"
        "from paidtwice.cli import main\n"
        "sys.argv = ['paidtwice', 'check', '--config', 'pyproject.toml']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=DEADLINE
    )
    assert done.returncode == 2, done.stderr
    frozen, left = (int(n) for n in done.stderr.splitlines()[-1].split()[1:])
    assert frozen > 10 * left, done.stderr


def test_no_config_says_where_to_put_one(tmp_path: Path) -> None:
    done = check(tmp_path)
    assert done.returncode == 2
    assert "add a [tool.paidtwice] table to pyproject.toml" in done.stderr


def test_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "paidtwice.toml").write_text(
        'app-dir = "agents"\n\n[[sweep]]\napp = "app"\nscript = "agents/s.toml"\ninput = \'{"a": [1]}\'\n\n'
        '[[sweep]]\napp = "app:app"\nevery-tool = true\n\n'
        '[replay-check]\napp = "app:app"\njournals = "journals"\n\n'
        "[budget]\nexpected-extra-usd-per-1000 = 0.05\n"
    )
    found = find_config(tmp_path / "sub")
    assert found == tmp_path / "paidtwice.toml"
    config = load_config(found)
    assert config.app_dir == tmp_path / "agents"
    assert config.lint == (tmp_path / "agents",)
    sweep, every = config.sweeps
    assert every.every_tool and every.script is None
    assert sweep.script == tmp_path / "agents" / "s.toml" and sweep.input == {"a": [1]}
    assert sweep.variations == ("steady", "drifting", "changed") and sweep.service is None
    assert not sweep.every_tool
    assert config.replay_check is not None and config.replay_check.journals == tmp_path / "journals"
    assert config.budget.expected_extra_usd_per_1000 == 0.05 and config.budget.repaid_model_calls is None


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(tmp_path) is None
    with pytest.raises(ConfigError, match=r"pyproject.toml: no \[tool.paidtwice\] table"):
        load_config(tmp_path / "pyproject.toml")


def test_an_app_of_imported_services_is_served_as_given() -> None:
    found = {h.name: h for h in discover("app:app", cwd=str(PROJECT))}
    assert set(found) == {"Naive/answer", "Journaled/answer"}
    assert found["Journaled/answer"].path == str(PROJECT / "journaled_agent.py")
    assert needs_input(found["Naive/answer"].input_schema)
    # MODULE alone: every service its globals hold (here imported ones), as when the app is built only
    # under `if __name__ == "__main__":`.
    assert {h.name for h in discover("journaled_agent", cwd=str(PROJECT))} == {"Journaled/answer"}


def test_a_handler_given_no_input_gets_one_from_its_schema() -> None:
    """The input is made from the handler's schema in the app's manifest, the same every time; only the
    handlers named are swept; a given input wins."""

    def targets(handlers: list[str], given: object, seed: int = 0) -> list[AppTarget]:
        return AppTarget.discovered("app:app", handlers, given, app_dir=PROJECT, seed=seed)

    (naive,) = targets(["Naive/answer"], None)
    assert naive.mode == "Naive/answer" and isinstance(naive.input, str)
    assert [t.input for t in targets(["Naive/answer"], None)] == [naive.input]
    given = targets([], "hi")
    assert [t.mode for t in given] == ["Naive/answer", "Journaled/answer"]
    assert {t.input for t in given} == {"hi"}


def test_the_pre_commit_hook_lints_with_pre_commit_itself(tmp_path: Path) -> None:
    """pre-commit installs paidtwice from this repository (its .pre-commit-hooks.yaml) into an environment
    of its own and runs the hook on a temporary repository's files: it fails on the naive agent and passes
    the journaled one. The two runs go at once, each in a repository of its own: try-repo installs the
    environment afresh every time (in a temporary store), and the install mostly waits on pip."""
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t"}
    env |= {"GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, cwd=repo, env=env, timeout=DEADLINE)

    def try_repo(name: str, *files: str) -> subprocess.CompletedProcess[str]:
        repo = tmp_path / name
        repo.mkdir()
        shutil.copy(PROJECT / "naive_agent.py", repo / "naive_agent.py")
        shutil.copy(PROJECT / "journaled_agent.py", repo / "journaled_agent.py")
        # A TypeScript agent: the hook is given .ts files too (pre-commit's `ts` type).
        shutil.copy(TS_CORPUS / "fetch_provider_naive.ts", repo / "naive_agent.ts")
        shutil.copy(TS_CORPUS / "fetch_provider.ts", repo / "journaled_agent.ts")
        run(repo, "git", "init", "-q")
        run(repo, "git", "add", ".")
        # try-repo: this repository's hooks file as it is in the work tree, as a `repo:` entry reads it.
        return run(repo, pre_commit, "try-repo", str(ROOT), "paidtwice-lint", "--files", *files)

    with ThreadPoolExecutor(max_workers=2) as pool:
        naive_run = pool.submit(try_repo, "naive", "naive_agent.py", "naive_agent.ts")
        clean_run = pool.submit(try_repo, "clean", "journaled_agent.py", "journaled_agent.ts")
        naive, clean = naive_run.result(), clean_run.result()
    assert naive.returncode == 1, naive.stdout + naive.stderr
    assert "naive_agent.py:" in naive.stdout and "PT001" in naive.stdout
    assert "naive_agent.ts:8:" in naive.stdout
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert json.dumps("Passed")[1:-1] in clean.stdout
