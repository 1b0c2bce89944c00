"""Processes the lab starts are its own: killed as a group, ports released, loopback only."""

from __future__ import annotations

import fcntl
import os
import signal
from pathlib import Path
from typing import Any

from support import LOOPBACK, assert_eventually, listening_addresses, pids_in_group

from paidtwice.engine import port_is_listening
from paidtwice.engine._ports import is_port_free
from paidtwice.lab import Lab
from paidtwice.targets import AgentHost, DeckTarget


def test_killed_agent_leaves_no_process_and_frees_its_port(lab: Lab) -> None:
    lane = lab.stub.open_lane(lab.stub.lane("default").script)  # type: ignore[union-attr]
    agent, _trace = lab.launch(DeckTarget("naive", pause=None), lane, "Agent_hygiene")
    assert isinstance(agent, AgentHost)
    with agent:
        agent.start()
        pid = agent._process.pid  # type: ignore[union-attr]
        assert pid is not None and port_is_listening(agent.port)
        agent.kill()
        assert pids_in_group(pid) == []
        assert is_port_free(agent.port)
        assert not port_is_listening(agent.port)


def test_every_listening_socket_is_on_loopback(lab: Lab) -> None:
    assert lab.server._process is not None and lab.server._process.pid is not None  # noqa: SLF001
    server_addresses = listening_addresses(lab.server._process.pid)
    assert len(server_addresses) >= 3
    assert all(address.startswith(LOOPBACK + ":") for address in server_addresses), server_addresses
    mine = listening_addresses(os.getpid())  # the stub runs in this process
    assert mine and all(address.startswith(LOOPBACK + ":") for address in mine), mine
    with AgentHost(target="paidtwice.agent.weather:app", env=dict(os.environ), workdir=lab.workdir) as agent:
        agent.start()
        pid = agent._process.pid  # type: ignore[union-attr]
        assert pid is not None
        addresses = listening_addresses(pid)
        assert addresses and all(a.startswith(LOOPBACK + ":") for a in addresses), addresses


def test_agent_group_dies_with_sigkill_of_the_group(lab: Lab) -> None:
    with AgentHost(target="paidtwice.agent.weather:app", env=dict(os.environ), workdir=lab.workdir) as agent:
        agent.start()
        pid = agent._process.pid  # type: ignore[union-attr]
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)
        assert_eventually(lambda: not agent.alive(), what="the agent to die")


def test_server_keeps_its_temporary_files_in_its_own_directory(
    lab: Lab, deck_records: dict[str, object]
) -> None:
    # restate-server's invoker makes a directory per invocation under TMPDIR and never removes it when
    # killed; the lab points TMPDIR into the server's base directory, which is removed with the server.
    pid = lab.server._process.pid  # type: ignore[union-attr]  # noqa: SLF001
    environ = dict(
        item.split("=", 1) for item in open(f"/proc/{pid}/environ").read().split("\0") if "=" in item
    )
    tmp = lab.server.base_dir / "tmp"
    assert environ["TMPDIR"] == str(tmp)
    assert deck_records and any(tmp.iterdir()), "the server wrote no temporary files where it was told"


def test_lock_files_nobody_holds_are_removed_and_held_ones_kept(tmp_path: Path, monkeypatch: Any) -> None:
    # What a SIGKILLed lab leaves: lock files whose locks the kernel released. A live lab's stay.
    from paidtwice.engine import _ports

    monkeypatch.setattr(_ports, "_LOCK_DIR", tmp_path / "paidtwice-ports")
    _ports._LOCK_DIR.mkdir()
    (_ports._LOCK_DIR / "40001.lock").touch()
    held = os.open(_ports._LOCK_DIR / "40002.lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _ports._remove_unheld()
        assert sorted(p.name for p in _ports._LOCK_DIR.iterdir()) == ["40002.lock"]
    finally:
        os.close(held)
    _ports._remove_unheld()
    assert not _ports._LOCK_DIR.exists()
