"""An app given as MODULE (no app object: many of Restate's examples build theirs only under `__main__`) is
every service the module holds and the services of the handlers it imports to call, found in the module
that defined them; what the module merely imports from elsewhere and never names is not served."""

from __future__ import annotations

from pathlib import Path

from paidtwice.targets._discovery import discover

HOME = """\
import restate

remote = restate.Service("Remote")
unused = restate.Service("Unused")


@remote.handler()
async def lookup(ctx: restate.Context, q: str) -> str:
    return q


@unused.handler()
async def idle(ctx: restate.Context, q: str) -> str:
    return q
"""
CALLER = """\
import restate

from home import lookup

caller = restate.Service("Caller")


@caller.handler()
async def run(ctx: restate.Context, q: str) -> str:
    return await ctx.service_call(lookup, arg=q)


if __name__ == "__main__":
    from home import remote

    app = restate.app([caller, remote])
"""


def test_a_module_serves_the_services_of_the_handlers_it_imports(tmp_path: Path) -> None:
    (tmp_path / "home.py").write_text(HOME)
    (tmp_path / "caller.py").write_text(CALLER)
    found = {(h.service, h.handler, Path(h.path).name) for h in discover("caller", cwd=str(tmp_path))}
    assert found == {("Caller", "run", "caller.py"), ("Remote", "lookup", "home.py")}
    # The module that defines them, given itself, serves its own two.
    assert {h.service for h in discover("home", cwd=str(tmp_path))} == {"Remote", "Unused"}
