"""PT001: urllib.request.urlopen, spelled as a dotted call and as a from-import."""

import json
import urllib.request
from urllib.request import Request, urlopen

import restate
from restate import Context

geo = restate.Service("Geo")


@geo.handler()
async def locate(ctx: Context, ip: str) -> dict:
    with urllib.request.urlopen(f"https://geo.example.com/{ip}") as resp:  # expect: PT001
        return json.load(resp)


@geo.handler()
async def reverse(ctx: Context, lat: float, lon: float) -> str:
    req = Request(f"https://geo.example.com/reverse?lat={lat}&lon={lon}")
    req.add_header("Accept", "application/json")
    body = urlopen(req, timeout=3).read()  # expect: PT001
    return json.loads(body)["name"]
