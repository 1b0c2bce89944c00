"""Aliases with from-imports: time(), datetime.now(), uuid4 as new_id, environ as env, choice as pick."""

from datetime import date, datetime
from os import environ as env
from os import getenv, urandom
from random import choice as pick
from time import time
from uuid import uuid4 as new_id

import restate
from openai import AsyncOpenAI as LLM
from restate import Context

desk = restate.Service("HelpDesk")

llm = LLM()


@desk.handler()
async def open_ticket(ctx: Context, subject: str) -> dict:
    ticket = {"id": str(new_id()), "subject": subject}  # expect: PT003
    ticket["opened"] = time()  # expect: PT002
    ticket["day"] = date.today().isoformat()  # expect: PT002
    ticket["agent"] = pick(["ana", "bo", "cy"])  # expect: PT003
    return ticket


@desk.handler()
async def answer(ctx: Context, question: str) -> str:
    model = env.get("MODEL", "gpt-4o-mini")  # expect: PT004
    tier = env["SUPPORT_TIER"]  # expect: PT004
    messages = [{"role": "user", "content": question}]
    reply = await llm.chat.completions.create(model=model, messages=messages)  # expect: PT001
    stamp = datetime.now().strftime("%H:%M")  # expect: PT002
    salt = urandom(4).hex() + (getenv("SITE") or "")  # expect: PT003, PT004
    return f"[{tier} {stamp} {salt}] {reply.choices[0].message.content}"
