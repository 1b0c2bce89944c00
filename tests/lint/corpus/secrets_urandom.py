"""PT003: secrets.* functions and os.urandom inside handlers."""

import os
import secrets

import restate
from restate import Context

auth = restate.Service("Auth")


@auth.handler()
async def issue_token(ctx: Context, user: str) -> dict:
    token = secrets.token_hex(16)  # expect: PT003
    refresh = secrets.token_urlsafe(32)  # expect: PT003
    return {"user": user, "token": token, "refresh": refresh}


@auth.handler()
async def salt(ctx: Context) -> str:
    return os.urandom(16).hex()  # expect: PT003


@auth.handler()
async def pick_backup_code(ctx: Context, codes: list[str]) -> str:
    return secrets.choice(codes)  # expect: PT003
