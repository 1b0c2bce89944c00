"""Same-module helpers: handler -> enrich -> lookup_company -> httpx; reported once, at the handler's call."""

import httpx
import restate
from restate import Context

leads = restate.Service("Leads")


async def lookup_company(domain: str) -> dict:
    async with httpx.AsyncClient(base_url="https://companies.example.com") as http:
        resp = await http.get(f"/{domain}")
    return resp.json()


async def enrich(lead: dict) -> dict:
    domain = lead["email"].split("@", 1)[1]
    lead["company"] = await lookup_company(domain)
    return lead


def score(lead: dict) -> int:
    return 10 if lead.get("company") else 1


@leads.handler()
async def qualify(ctx: Context, lead: dict) -> dict:
    lead = await enrich(lead)  # expect: PT001
    lead["score"] = score(lead)
    return lead


@leads.handler()
async def company(ctx: Context, domain: str) -> dict:
    return await lookup_company(domain)  # expect: PT001
