"""The fork server: a forked child is the program a plain start would run, and is owned the same way."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import alive, assert_eventually, pids_in_group

from paidtwice._exceptions import ServerStartError
from paidtwice.agent._process import AGENT_PRELOAD
from paidtwice.engine import Process, port_is_listening
from paidtwice.engine._forkserver import ForkServer
from paidtwice.lab import Lab
from paidtwice.targets import AgentHost

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


PRELOADED = """
import os, sys
SEEN = {"marker": os.environ.get("PAIDTWICE_PROBE"), "cwd": os.getcwd(), "path0": sys.path[0]}
"""

STARTS_A_THREAD = """
import threading
threading.Thread(target=threading.Event().wait, name="started at import", daemon=True).start()
"""

PRELOAD_PROBE = """
import json, os, sys
preloaded = "probe_preloaded" in sys.modules
import probe_preloaded
json.dump(
    {"preloaded": preloaded, "seen": probe_preloaded.SEEN, "marker": os.environ.get("PAIDTWICE_PROBE"),
     "parent": os.getppid()},
    open(sys.argv[1], "w"),
)
"""


def forked_preload_probe(server: ForkServer, tmp_path: Path, name: str) -> dict[str, object]:
    out = tmp_path / f"{name}.json"
    process = Process(
        [sys.executable, "-m", "preload_probe", str(out)],
        name=name,
        env={"PATH": os.environ["PATH"], "PAIDTWICE_PROBE": "the child's"},
        log_path=tmp_path / f"{name}.log",
        cwd=tmp_path,
        forkserver=server,
    ).start(ports_free=False)
    assert_eventually(lambda: not process.alive(), timeout=30, what=f"{name} to exit")
    process.kill()
    seen: dict[str, object] = json.loads(out.read_text())
    return seen


def test_a_fork_server_forked_from_another_preloads_in_the_environment_it_is_given(
    forkserver: ForkServer, tmp_path: Path
) -> None:
    """A preloading fork server (`forked_from`) imports its modules in its own environment and directory,
    its children find them imported and still get their own environment, and it dies with its parent."""
    (tmp_path / "probe_preloaded.py").write_text(PRELOADED)
    (tmp_path / "preload_probe.py").write_text(PRELOAD_PROBE)
    env = {"PATH": os.environ["PATH"], "PAIDTWICE_PROBE": "the fork server's"}
    preloading = ForkServer.forked_from(
        forkserver, preload=["probe_preloaded"], env=env, cwd=tmp_path, log_path=tmp_path / "preloading.log"
    )
    try:
        preloading.wait_ready()
        seen = forked_preload_probe(preloading, tmp_path, "probe")
        assert seen["preloaded"] is True
        assert seen["seen"] == {"marker": "the fork server's", "cwd": str(tmp_path), "path0": str(tmp_path)}
        assert seen["marker"] == "the child's"
        server_pid = preloading._child.pid  # type: ignore[union-attr]  # noqa: SLF001
        assert seen["parent"] == server_pid
        assert preloading.forks == 1
        forkserver.close()
        assert_eventually(lambda: not alive(server_pid), timeout=10, what="the preloading fork server to die")
    finally:
        preloading.close()


def test_a_fork_server_running_a_thread_starts_its_children_plainly(
    forkserver: ForkServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A fork would copy a thread's locks but not the thread: a fork server whose preload started one
    forks nothing, and each process it is asked for starts as a new interpreter, saying why at debug level."""
    (tmp_path / "probe_preloaded.py").write_text(PRELOADED + STARTS_A_THREAD)
    (tmp_path / "preload_probe.py").write_text(PRELOAD_PROBE)
    env = {"PATH": os.environ["PATH"]}
    preloading = ForkServer.forked_from(
        forkserver, preload=["probe_preloaded"], env=env, cwd=tmp_path, log_path=tmp_path / "preloading.log"
    )
    try:
        preloading.wait_ready()
        with caplog.at_level(logging.DEBUG, logger="paidtwice.engine"):
            seen = forked_preload_probe(preloading, tmp_path, "probe")
        assert seen["preloaded"] is False and seen["parent"] == os.getpid()
        assert seen["marker"] == "the child's"
        assert preloading.forks == 0
        assert "not forked" in caplog.text and "started at import" in caplog.text, caplog.text
        assert "not forking preload_probe" in (tmp_path / "preloading.log").read_text()
    finally:
        preloading.close()
