"""What a model answer waits for under `--cmd` before the stub sends it: the agent quiet, and every callee its
invocation tree called already started in it.

An SDK sends a step's RunCommand before its action runs, but a loaded agent may write it after the action's
model request went out; with the answer held, only what the agent does without it is on the wire, so whether
a step had begun is read on the wire, not guessed from a time. Every answer waiting takes the same readings,
so the calls an agent made together (two handlers raced, a fan-out) are answered at one quiet moment, however
slowly the machine let each arrive: one answered alone lets its handler win a race it loses when quiet.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from paidtwice.agent._loop import proxy_loop
from paidtwice.engine import group_quiet

__all__ = ["STEP_DEADLINE", "CatchUp"]

STEP_DEADLINE = 30.0
"""How long a model answer waits, at most, for the agent to go quiet (`group_quiet`): only an agent that never
sleeps waits it out, and its call is then answered unplaced when a step begun after keeps the answer."""
_CATCH_UP_TURNS = 16
"""Turns of the proxy's loop that read a frame already in its socket through to the log (select, the h2
reader, the frame pump: three or four turns), with room to spare."""
_QUIET_POLL = 0.01


class CatchUp:
    """The quiet readings of one proxy's agent, shared by the answers waiting, and the tree's calls whose
    callee has not reached the proxy yet. The `call`, `callee` and `started` notes come from the proxy's
    loop, where `pending` is read too."""

    def __init__(self, agent: Callable[[], tuple[int | None, int]]) -> None:
        self._agent = agent
        """The agent's process group (None while it is down) and its port."""
        self._shared: asyncio.Task[tuple[float, bool]] | None = None
        self._calls: dict[str, set[int]] = {}
        """Each invocation's calls to this deployment, by their journal entry (a command the agent sent again
        after a kill is the same call)."""
        self._callees: dict[str, set[str]] = {}
        self._started: set[str] = set()
        """The invocations whose first attempt has reached the proxy."""

    def call(self, invocation: str, entry: int) -> None:
        self._calls.setdefault(invocation, set()).add(entry)

    def callee(self, invocation: str, callee: str) -> None:
        self._callees.setdefault(invocation, set()).add(callee)

    def started(self, invocation: str) -> None:
        self._started.add(invocation)

    def pending(self) -> int:
        """Calls the tree made to this deployment whose callee has not started here yet: the server has work
        still to send the agent, whose model calls go with the ones already held. A send is not waited for
        (it may be delayed); a callee that never starts is bounded by `STEP_DEADLINE`."""
        return sum(
            max(0, len(entries) - len(self._callees.get(invocation, set()) & self._started))
            for invocation, entries in self._calls.items()
        )

    async def wait(self) -> None:
        """Return once the agent went quiet after this was asked, with its callees started and every frame
        it had sent by then logged by the proxy; or after `STEP_DEADLINE`."""
        asked = time.monotonic()
        deadline = asked + STEP_DEADLINE
        while True:
            proven_at, quiet = await self._reading()
            # A reading proves quiet over its span: a call asked before the span ended was sent before it
            # began (the agent did not run in it), so that reading holds for it too.
            if (quiet and proven_at >= asked) or time.monotonic() >= deadline:
                return

    async def _reading(self) -> tuple[float, bool]:
        """One reading at a time, shared by every answer waiting: (when its proof ended, quiet)."""
        loop = asyncio.get_running_loop()
        shared = self._shared
        if shared is None or shared.done() or shared.get_loop() is not loop:
            shared = self._shared = loop.create_task(self._read())
        return await asyncio.shield(shared)

    async def _read(self) -> tuple[float, bool]:
        def read() -> tuple[float, bool]:
            group, port = self._agent()
            quiet = group is None or group_quiet(group, port=port)
            return time.monotonic(), quiet

        async def turns() -> int:
            for _ in range(_CATCH_UP_TURNS):
                await asyncio.sleep(0)
            return self.pending()

        proven_at, quiet = await asyncio.to_thread(read)
        pending = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(turns(), proxy_loop()))
        if not quiet or pending:
            await asyncio.sleep(_QUIET_POLL)
        return proven_at, quiet and not pending
