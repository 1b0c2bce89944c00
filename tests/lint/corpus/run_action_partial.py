"""functools.partial as the action, and the `action=` keyword of ctx.run: not reported."""

import functools
from functools import partial

import requests
import restate
from restate import Context

mailer = restate.Service("Mailer")


def send_mail(to: str, subject: str, body: str) -> int:
    resp = requests.post("https://mail.example.com/send", json={"to": to, "subject": subject, "body": body})
    return resp.status_code


def render(template: str) -> str:
    with open(f"templates/{template}.txt") as f:
        return f.read()


@mailer.handler()
async def welcome(ctx: Context, to: str) -> int:
    body = await ctx.run_typed("render", partial(render, "welcome"))
    return await ctx.run_typed("send", functools.partial(send_mail, to, "Welcome!", body))


@mailer.handler()
async def reminder(ctx: Context, to: str) -> int:
    body = await ctx.run(name="render", action=partial(render, "reminder"))
    return await ctx.run("send", action=lambda: send_mail(to, "Reminder", body))
