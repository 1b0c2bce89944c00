"""A restate-server process of the lab's own: free loopback ports, its own data directory, health-checked.

Knobs that change the server's behaviour are the server's own environment variables, set here and nowhere
else, so a reader sees in one place what the lab's server runs with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from paidtwice._exceptions import ServerStartError
from paidtwice._pins import RESTATE_SERVER_VERSION
from paidtwice.engine._http import http
from paidtwice.engine._janitor import forget, remove_at_exit
from paidtwice.engine._ports import HOST, PortLease, lease_port
from paidtwice.engine._process import Process, wait_until
from paidtwice.engine._provision import ensure_server_binary

__all__ = ["RestateServer"]

_START_TIMEOUT = 60.0


class RestateServer:
    """restate-server on 127.0.0.1, started on enter and killed (whole process group) on exit.

    `base_dir` keeps the server's data; when not given, a temporary one is made and removed on exit.
    `restart()` kills the process and starts it again on the same data directory and ports, which is how the
    lab shows what survives the server's own crash.
    """

    def __init__(
        self,
        *,
        version: str = RESTATE_SERVER_VERSION,
        base_dir: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
        echo: Callable[[str], None] = print,
    ) -> None:
        self.version = version
        """restate-server version, from the npm registry."""
        self._own_dir = base_dir is None
        self.base_dir = base_dir or Path(tempfile.mkdtemp(prefix="paidtwice-restate-"))
        """Data directory (`--base-dir`)."""
        remove_at_exit(self._scratch)
        self.extra_env = dict(extra_env or {})
        self._echo = echo
        self._leases: list[PortLease] = []
        self._process: Process | None = None
        self.ingress_port = 0
        self.admin_port = 0
        self.fabric_port = 0

    @property
    def admin_url(self) -> str:
        return f"http://{HOST}:{self.admin_port}"

    @property
    def ingress_url(self) -> str:
        return f"http://{HOST}:{self.ingress_port}"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "restate-server.log"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESTATE_")}
        env.update(
            {
                "RESTATE_BASE_DIR": str(self.base_dir),
                "RESTATE_NODE_NAME": "paidtwice",
                "RESTATE_LISTEN_MODE": "tcp",
                "RESTATE_BIND_IP": HOST,
                "RESTATE_BIND_ADDRESS": f"{HOST}:{self.fabric_port}",
                "RESTATE_ADVERTISED_ADDRESS": f"http://{HOST}:{self.fabric_port}",
                "RESTATE_INGRESS__BIND_ADDRESS": f"{HOST}:{self.ingress_port}",
                "RESTATE_ADMIN__BIND_ADDRESS": f"{HOST}:{self.admin_port}",
                # Several lab servers may share one 24 GiB machine; the default asks for 2 GiB each.
                "RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE": "512MB",
                # A lab's server holds hundreds of invocations, not millions: the default 24 partitions
                # cost it 0.6 s of CPU in its first seconds (twice over in a deck whose server-kill row
                # starts a server of its own), and every SQL query reads each partition. No count the lab
                # measures depends on how invocations are partitioned.
                "RESTATE_DEFAULT_NUM_PARTITIONS": "4",
                # Invocations a partition runs at once; the rest wait, ready, on the server. The default
                # (1,000) hands one agent process 4,000 at once: each then waits its turn for the model
                # longer than the server's inactivity timeout (1 min) on a loaded machine, and a soak of
                # 10,000 stalled. The deck and the sweep run a few dozen at a time.
                "RESTATE_WORKER__INVOKER__CONCURRENT_INVOCATIONS_LIMIT": "100",
                "RESTATE_LOG_FORMAT": "compact",
                "DO_NOT_TRACK": "true",
                # The invoker makes a temporary directory per invocation and leaves it behind when the
                # server is killed; under the base directory, they go with it.
                "TMPDIR": str(self._tmp_dir),
            }
        )
        env.update(self.extra_env)
        return env

    @property
    def _tmp_dir(self) -> Path:
        return self.base_dir / "tmp"

    @property
    def _scratch(self) -> Path:
        """What goes when the server is stopped: its data directory if the server made it, else its TMPDIR."""
        return self.base_dir if self._own_dir else self._tmp_dir

    def config(self) -> dict[str, Any]:
        """The configuration this server runs with (the binary's defaults under the lab's environment), as
        the binary itself prints it (`--dump-config`, TOML), so a figure built on a default is read from the
        server, never from its docs."""
        binary = ensure_server_binary(self.version, echo=self._echo)
        self._tmp_dir.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                [str(binary), "--dump-config"],
                env=self._env(),
                cwd=self._tmp_dir,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if done.returncode != 0:
                raise ServerStartError(f"restate-server --dump-config failed: {done.stderr.strip()[-300:]}")
            return tomllib.loads(done.stdout)
        except (OSError, subprocess.TimeoutExpired, tomllib.TOMLDecodeError) as error:
            raise ServerStartError(f"restate-server --dump-config: {error}") from None

    def start(self) -> RestateServer:
        binary = ensure_server_binary(self.version, echo=self._echo)
        self._tmp_dir.mkdir(parents=True, exist_ok=True)
        if not self._leases:
            self._leases = [lease_port() for _ in range(3)]
            self.ingress_port, self.admin_port, self.fabric_port = (lease.port for lease in self._leases)
        try:
            self._process = Process(
                [str(binary), "--no-logo"],
                name=f"restate-server {self.version}",
                env=self._env(),
                log_path=self.log_path,
                ports=[self.ingress_port, self.admin_port, self.fabric_port],
            ).start()
            self._wait_healthy()
        except BaseException:
            # Nobody else holds this server yet: its process, ports and temporary directory go now.
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        process = self._process
        assert process is not None

        def healthy() -> bool:
            if not process.alive():
                raise ServerStartError(
                    f"restate-server exited with status {process.returncode} during start-up: "
                    f"{process.log_tail()} (log: {self.log_path})"
                )
            try:
                admin = http().get(f"{self.admin_url}/health", timeout=1.0)
                ingress = http().get(f"{self.ingress_url}/restate/health", timeout=1.0)
            except httpx.HTTPError:
                return False
            return admin.status_code == 200 and ingress.status_code == 200

        if not wait_until(healthy, timeout=_START_TIMEOUT, interval=0.1):
            raise ServerStartError(
                f"restate-server did not become healthy within {_START_TIMEOUT:.0f}s (log: {self.log_path})"
            )

    def kill(self) -> None:
        """SIGKILL the server's process group (its data directory stays)."""
        if self._process is not None:
            self._process.kill()

    def restart(self) -> None:
        """Kill the server and start it again on the same data directory and ports."""
        self.kill()
        self.start()

    @property
    def pid(self) -> int | None:
        """The server's pid; None while it is not running."""
        return self._process.pid if self._process is not None else None

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    def stop(self) -> None:
        try:
            self.kill()
        finally:
            for lease in self._leases:
                lease.release()
            self._leases = []
            shutil.rmtree(self._scratch, ignore_errors=True)
            forget(self._scratch)

    def __enter__(self) -> RestateServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
