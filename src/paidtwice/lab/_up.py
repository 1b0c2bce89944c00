"""`paidtwice lab up`: a lab that stays up, to point `watch`, Restate's UI and Restate's CLI at.

restate-server (or a cluster), the stub answering from a script, and one app (the deck's weather agent by
default, or the user's MODULE:APP) with its services registered under their own names. Everything is owned by
the `Lab` and the agent host, and stopped on exit.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from paidtwice._exceptions import UsageError
from paidtwice.agent import DECK_AGENT
from paidtwice.engine import RestateCluster
from paidtwice.lab._lab import Lab
from paidtwice.stub import resolve_script
from paidtwice.targets import DeckTarget

__all__ = ["LabInfo", "LabUp"]


@dataclass(frozen=True)
class LabInfo:
    """Where a lab that is up answers (what `--info FILE` holds)."""

    admin_url: str
    """Restate's admin API; `paidtwice watch --admin-url` and `restate` CLI's `--admin-url`."""
    ingress_url: str
    """Where invocations are sent."""
    stub_url: str
    """The stub model's OpenAI-compatible base URL the app was given."""
    ui_url: str
    """Restate's web UI."""
    admin_urls: tuple[str, ...]
    """Every node's admin API (one for a single server)."""
    services: tuple[str, ...]
    """The services the app registered."""
    deployment: str
    """The app's deployment id."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")


class LabUp:
    """Start it with `with`; the lab, the stub and the app stop on exit."""

    def __init__(
        self,
        *,
        app: str | None = None,
        app_dir: Path | None = None,
        script: str = "steady",
        variation: str = "steady",
        cluster: int = 1,
        lab: Lab | None = None,
    ) -> None:
        if app_dir is not None and not app_dir.is_dir():
            raise UsageError(f"--app-dir {app_dir} is not a directory")
        self._script = resolve_script(script, variation)  # checked before anything starts
        self._app = app or DECK_AGENT
        self._app_dir = app_dir
        self._cluster = cluster
        self._lab = lab
        self._stack = ExitStack()
        self.info: LabInfo | None = None

    def __enter__(self) -> LabUp:
        try:
            lab = self._lab or self._stack.enter_context(Lab(echo=lambda _: None, cluster=self._cluster))
            lane = lab.stub.open_lane(self._script, name="lab-up")
            # The deck's agent serves "Agent"; a user's app, its services under their own names.
            target = DeckTarget(
                "naive", app=self._app, cwd=str(self._app_dir) if self._app_dir else None, pause=None
            )
            agent, _trace = lab.launch(target, lane, "Agent")
            self._stack.enter_context(agent)
            agent.start()
            deployment = lab.admin.register_deployment(agent.uri)
            server = lab.server
            nodes = (
                tuple(node.admin_url for node in server.nodes)
                if isinstance(server, RestateCluster)
                else (server.admin_url,)
            )
            services = tuple(str(row["name"]) for row in lab.sql.query("SELECT name FROM sys_service"))
            self.info = LabInfo(
                admin_url=server.admin_url,
                ingress_url=server.ingress_url,
                stub_url=lane.base_url,
                ui_url=f"{server.admin_url}/ui/",
                admin_urls=nodes,
                services=services,
                deployment=deployment.id,
            )
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.close()
