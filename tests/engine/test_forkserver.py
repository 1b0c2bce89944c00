"""The fork server: a forked child is the program a plain start would run, and is owned the same way."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import alive, assert_eventually, pids_in_group

from paidtwice._exceptions import ServerStartError
from paidtwice.agent import AgentHost
from paidtwice.agent._process import AGENT_PRELOAD
from paidtwice.engine import Process, port_is_listening
from paidtwice.engine._forkserver import ForkServer
from paidtwice.lab import Lab

WARNING = re.compile(r"\w*Warning\b|warning:|not preloaded|Traceback")

PROBE = """
import json, os, sys
import paidtwice.agent.weather
print("probe says hello")
json.dump(
    {
        "name": __name__,
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "path0": sys.path[0],
        "marker": os.environ.get("PAIDTWICE_PROBE"),
        "leaked": os.environ.get("PAIDTWICE_NOT_GIVEN"),
        "session": os.getsid(0) == os.getpid(),
        "group": os.getpgid(0) == os.getpid(),
        "parent": os.getppid(),
        "paidtwice": sorted(m for m in sys.modules if m.startswith("paidtwice")),
        "service": paidtwice.agent.weather.SERVICE,
    },
    open(sys.argv[1], "w"),
)
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def forkserver(tmp_path: Path) -> Iterator[ForkServer]:
    server = ForkServer(preload=AGENT_PRELOAD, log_path=tmp_path / "forkserver.log").start()
    try:
        yield server
    finally:
        server.close()


def fork_probe(forkserver: ForkServer, tmp_path: Path, *, exit_code: int, env: dict[str, str]) -> Path:
    (tmp_path / "probe_module.py").write_text(PROBE)
    out = tmp_path / "probe.json"
    process = Process(
        [sys.executable, "-m", "probe_module", str(out), str(exit_code)],
        name="probe",
        env=env,
        log_path=tmp_path / "probe.log",
        cwd=tmp_path,
        forkserver=forkserver,
    ).start(ports_free=False)
    assert_eventually(lambda: not process.alive(), timeout=30, what="the probe to exit")
    process.kill()
    return out


def test_a_forked_child_runs_its_module_as_main_in_its_own_environment(
    forkserver: ForkServer, tmp_path: Path
) -> None:
    os.environ["PAIDTWICE_NOT_GIVEN"] = "the lab's own"
    try:
        env = {"PATH": os.environ["PATH"], "PAIDTWICE_PROBE": "given", "PAIDTWICE_SERVICE": "Probe"}
        seen = json.loads(fork_probe(forkserver, tmp_path, exit_code=0, env=env).read_text())
    finally:
        del os.environ["PAIDTWICE_NOT_GIVEN"]
    assert seen["name"] == "__main__"
    assert seen["argv"][1:] == ["0"]
    assert seen["cwd"] == seen["path0"] == str(tmp_path)
    assert seen["marker"] == "given" and seen["leaked"] is None
    # The app was imported in the child, after its environment was set.
    assert seen["service"] == "Probe"
    assert seen["session"] and seen["group"]
    assert seen["parent"] == forkserver._process.pid  # type: ignore[union-attr]  # noqa: SLF001
    # The agent's side only: nothing of the lab or the stub came along with the fork.
    assert not any(m.startswith(("paidtwice.lab", "paidtwice.stub")) for m in seen["paidtwice"])
    assert "probe says hello" in (tmp_path / "probe.log").read_text()
    # The fork server warns of nothing (no module run twice, no failed preload). Other lines, which a
    # library may print on a loaded machine, are not this test's business.
    log = (tmp_path / "forkserver.log").read_text().splitlines()
    assert [line for line in log if WARNING.search(line)] == []


def test_a_forked_child_that_fails_leaves_its_traceback_in_its_log(
    forkserver: ForkServer, tmp_path: Path
) -> None:
    process = Process(
        [sys.executable, "-m", "paidtwice_no_such_module"],
        name="missing",
        log_path=tmp_path / "missing.log",
        forkserver=forkserver,
    ).start(ports_free=False)
    assert_eventually(lambda: not process.alive(), timeout=30, what="the child to exit")
    assert "No module named paidtwice_no_such_module" in process.log_tail()


def test_only_python_modules_can_be_forked(forkserver: ForkServer, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only `python -m MODULE"):
        Process(["/bin/true"], name="true", log_path=tmp_path / "t.log", forkserver=forkserver).start()


def test_agents_die_with_the_fork_server(tmp_path: Path) -> None:
    forkserver = ForkServer(preload=AGENT_PRELOAD, log_path=tmp_path / "forkserver.log").start()
    try:
        with AgentHost(
            target="paidtwice.agent.weather:app",
            env=dict(os.environ),
            workdir=tmp_path,
            forkserver=forkserver,
        ) as agent:
            agent.start()
            agent.prepare()
            serving = agent._process.pid  # type: ignore[union-attr]  # noqa: SLF001
            spare = agent._pending[0][0].pid  # noqa: SLF001
            assert serving and spare and port_is_listening(agent.port)
            os.kill(forkserver._process.pid, signal.SIGKILL)  # type: ignore[union-attr]  # noqa: SLF001
            assert_eventually(lambda: not alive(serving) and not alive(spare), timeout=10, what="agents")
            assert pids_in_group(serving) == [] and not agent.alive()
        # A dead fork server is an error that says so, for every later start too.
        for _ in range(2):
            with pytest.raises(ServerStartError, match="fork server"):
                Process(
                    [sys.executable, "-m", "paidtwice.agent.host"],
                    name="late",
                    log_path=tmp_path / "late.log",
                    forkserver=forkserver,
                ).start(ports_free=False)
    finally:
        forkserver.close()


def test_the_lab_forks_its_agents(lab: Lab) -> None:
    with AgentHost(
        target="paidtwice.agent.weather:app",
        env=dict(os.environ),
        workdir=lab.workdir / "forked",
        forkserver=lab.forkserver,
    ) as agent:
        agent.start()
        pid = agent._process.pid  # type: ignore[union-attr]  # noqa: SLF001
        assert pid is not None and port_is_listening(agent.port)
        status = Path(f"/proc/{pid}/status").read_text()
        parent = int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])
        assert parent == lab.forkserver._process.pid  # type: ignore[union-attr]  # noqa: SLF001
