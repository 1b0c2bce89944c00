"""PT005: open(), Path(...).read_text/read_bytes/open and a module-level Path instance read in handlers."""

import json
from pathlib import Path

import restate
from restate import Context

prompts = restate.Service("Prompts")

SYSTEM_PROMPT = Path("prompts/system.txt")


@prompts.handler()
async def system(ctx: Context) -> str:
    return SYSTEM_PROMPT.read_text()  # expect: PT005


@prompts.handler()
async def template(ctx: Context, name: str) -> str:
    text = Path(f"prompts/{name}.txt").read_text(encoding="utf-8")  # expect: PT005
    return text.strip()


@prompts.handler()
async def config(ctx: Context) -> dict:
    with open("config/agent.json") as f:  # expect: PT005
        return json.load(f)


@prompts.handler()
async def logo(ctx: Context) -> int:
    raw = Path("assets/logo.png").read_bytes()  # expect: PT005
    with Path("assets/manifest.json").open() as fh:  # expect: PT005
        return len(raw) + len(fh.read())
