"""The host's step log (`paidtwice.agent.host`): one JSON line per model request, context operation and step
execution, each filed under its invocation (a tree's root, `_tree`), and the gates that stop a handler at
one of them. The lines count the tree's moments in one sequence; a gate counts its own invocation's, after
a callee's place in the tree, so it names the same moment in every run however the callees race."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from paidtwice.agent._tree import Tree

__all__ = ["StepLog"]


class StepLog:
    """Writes the step log and holds the gates; counters are per invocation (per tree, with a `Tree`: a
    callee's lines are filed under its root, `_tree`), for this process's life; a gate's, per invocation."""

    def __init__(self, fd: int, gate: str | None, tree: Tree | None = None) -> None:
        self.fd = fd
        self.gates = frozenset(g for g in (gate or "").split(",") if g)
        self.tree = tree
        self._counts: dict[tuple[str, str], int] = {}
        """Per (filed invocation, kind): the number a line has in the log (a tree's count)."""
        self._per_invocation: dict[tuple[str, str], int] = {}
        """Per (invocation, kind): the count a gate names (a callee's own, whatever its tree does)."""
        self._lock = threading.Lock()

    def _filed(self, invocation: str) -> tuple[str, dict[str, str | bool]]:
        """The invocation a line is filed under, and what it adds (a callee's own id and handler)."""
        place = self.tree.place_of(invocation) if self.tree is not None else None
        if self.tree is None or place is None:
            return invocation, {}
        return place[0], self.tree.fields(*place)

    def next(self, invocation: str, kind: str) -> tuple[int, str]:
        """The next `kind` ("model", "op", "step") of the invocation: its number in the log (its tree's
        count), and its gates' name (`kind:N`, N the invocation's own count, after a callee's place)."""
        key = self._filed(invocation)[0]
        place = self.tree.place_in_tree(invocation) if self.tree is not None else ""
        with self._lock:
            n = self._counts.get((key, kind), 0) + 1
            self._counts[(key, kind)] = n
            its = self._per_invocation.get((invocation, kind), 0) + 1
            self._per_invocation[(invocation, kind)] = its
        return n, f"{place}/{kind}:{its}" if place else f"{kind}:{its}"

    def write(self, invocation: str, event: str, **fields: Any) -> None:
        filed, extra = self._filed(invocation)
        line = json.dumps({"invocation": filed, "event": event, **fields, **extra, "at": time.time()})
        os.write(self.fd, (line + "\n").encode())

    def gated(self, invocation: str, gate: str) -> bool:
        if gate not in self.gates:
            return False
        self.write(invocation, "gate", gate=gate)
        return True
