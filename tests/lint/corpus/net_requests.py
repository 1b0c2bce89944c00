"""PT001: requests functions and a requests.Session instance (module level and local)."""

import requests
import restate
from restate import Context

crm = restate.Service("Crm")

session = requests.Session()
session.headers["User-Agent"] = "crm-agent/1.0"


@crm.handler()
async def find_contact(ctx: Context, email: str) -> dict:
    resp = requests.get("https://crm.example.com/contacts", params={"email": email})  # expect: PT001
    return resp.json()


@crm.handler()
async def add_note(ctx: Context, contact_id: str, note: str) -> None:
    session.post(f"https://crm.example.com/contacts/{contact_id}/notes", json={"note": note})  # expect: PT001


@crm.handler()
async def delete_contact(ctx: Context, contact_id: str) -> bool:
    with requests.Session() as s:
        r = s.delete(f"https://crm.example.com/contacts/{contact_id}")  # expect: PT001
    requests.put("https://crm.example.com/audit", json={"deleted": contact_id})  # expect: PT001
    return r.ok
