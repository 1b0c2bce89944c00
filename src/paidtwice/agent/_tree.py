"""An invocation tree in one host process: a swept handler and the handlers of its app it calls or sends to.

Why: a sweep plans and kills a tree as it does one invocation, and many runs of one app share a server. So
with `PAIDTWICE_TREE=TAG` (`TREE`) the host serves every service of the app under a name of its own for the
run (`NAME_TAG`), routes each call or send to a service of the app to that run's copy, and marks it with the
`x-paidtwice-root` header (`ROOT_HEADER`): the root invocation, and the callee's place in the tree
(`Tree.place_in_tree`), the same in every run however the callees race. The step log and the model requests'
tag then name the root and count the whole tree's calls, operations and steps in one sequence; a callee's
lines add who it is (`by`, `handler`, `place`, `sent`), and its gates are named by its place and its own
count (`PLACE/step:N:before`). A saved journal's call commands lose the header (`paidtwice.replay._untree`).

A call to a service the app does not serve goes where it would have gone, unfollowed (`follows: false`): the
sweep says it could not follow it. The step-log fields of a tree: docs/explanation/lab.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from paidtwice.agent._env import ROOT_HEADER, TREE

__all__ = ["ROOT_HEADER", "TREE", "Tree", "tree_renames"]

_SENT = "sent"
"""Ends the root header's value on a send (a call's is the root and the callee's place)."""


def tree_renames(services: list[str], given: list[str], tag: str) -> list[str]:
    """`given` (OLD=NEW) and, for every other service, OLD=OLD_TAG (letters, digits and '_' only, as the
    lab names its runs' services)."""
    named = {item.split("=", 1)[0] for item in given}
    extra = [f"{s}={re.sub(r'[^A-Za-z0-9_]', '_', s)}_{tag}" for s in services if s not in named]
    return [*given, *extra]


@dataclass
class Tree:
    """The renames of one run and the tree each invocation of this process belongs to."""

    follow: dict[str, str]
    """Service as the code names it -> the name it is served under in this run."""
    roots: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Invocation -> (its tree's root, its SERVICE/HANDLER as the code names it)."""
    sent: set[str] = field(default_factory=set)
    """The callees a send started (their caller goes on without them)."""
    places: dict[str, str] = field(default_factory=dict)
    """Callee -> its place in the tree (`place_in_tree`)."""

    @staticmethod
    def of(renames: list[str]) -> Tree:
        return Tree(dict(item.split("=", 1) for item in renames))

    def handler_of(self, ctx: Any) -> str:
        handler = ctx.handler
        served = handler.service_tag.name
        code = next((old for old, new in self.follow.items() if new == served), served)
        return f"{code}/{handler.name}"

    def place(self, ctx: Any) -> tuple[str, str, str]:
        """(root, invocation, SERVICE/HANDLER) of the invocation `ctx` serves."""
        request = ctx.request()
        invocation: str = request.id
        if invocation not in self.roots:
            headers = {str(k).lower(): str(v) for k, v in (request.headers or {}).items()}
            root, *words = (headers.get(ROOT_HEADER) or invocation).split()
            if words and words[-1] == _SENT:
                words.pop()
                self.sent.add(invocation)
            if words:
                self.places[invocation] = words[0]
            self.roots[invocation] = (root, self.handler_of(ctx))
        root, handler = self.roots[invocation]
        return root, invocation, handler

    def place_of(self, invocation: str) -> tuple[str, str, str] | None:
        """(root, invocation, SERVICE/HANDLER) of an invocation seen before (or served by the current
        context)."""
        if invocation not in self.roots:
            from restate.server_context import current_context

            try:
                ctx = current_context()
            except LookupError:
                ctx = None
            if ctx is None or ctx.request().id != invocation:
                return None
            return self.place(ctx)
        root, handler = self.roots[invocation]
        return root, invocation, handler

    def place_in_tree(self, invocation: str) -> str:
        """Where `invocation` sits in its tree, the same in every run of it: "" for the root; for a callee,
        the position in its caller's attempt of the call or send that started it, after its caller's place
        ("7", "7.2"). The code makes its calls in the same order in every run, whichever callee runs first."""
        return self.places.get(invocation, "")

    def fields(self, root: str, invocation: str, handler: str) -> dict[str, str | bool]:
        """What a step-log line of `invocation` adds: nothing for the root, `by`, `handler` and `place` for a
        callee (and `sent` for one a send started)."""
        if invocation == root:
            return {}
        sent = {"sent": True} if invocation in self.sent else {}
        return {"by": invocation, "handler": handler, "place": self.place_in_tree(invocation), **sent}

    def follows(self, service: str) -> bool:
        """A call to `service` goes to this run's copy of it (a service of the app)."""
        return service in self.follow

    def route(
        self, ctx: Any, service: str, args: tuple[Any, ...], kwargs: dict[str, Any], *, sent: bool, at: int
    ) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
        """A call's service as served in this run, and its arguments with the root header added (do_raw_call's
        `headers`, its 8th argument after service and handler): the root, the callee's place (the call made
        at position `at` of its caller's attempt), marked on a send."""
        served = self.follow.get(service)
        if served is None:
            return service, args, kwargs
        root, invocation, _ = self.place(ctx)
        caller = self.place_in_tree(invocation)
        words = [root, f"{caller}.{at}" if caller else str(at), *([_SENT] if sent else [])]
        ours = {ROOT_HEADER: " ".join(words)}
        if len(args) > 7:
            args = (*args[:7], {**(args[7] or {}), **ours}, *args[8:])
        else:
            kwargs = {**kwargs, "headers": {**(kwargs.get("headers") or {}), **ours}}
        return served, args, kwargs

    def is_callee(self, invocation: str) -> bool:
        """`invocation` is of the tree but not its root."""
        place = self.roots.get(invocation)
        return place is not None and place[0] != invocation
