"""Handlers calling helpers of the same package through absolute imports (`from crosspkg.helpers import`)."""

import restate
from restate import Context

from crosspkg import helpers as weather_helpers
from crosspkg.helpers import fetch_weather as weather
from crosspkg.helpers import stamp

outlook = restate.Service("Outlook")


@outlook.handler()
async def brief(ctx: Context, city: str) -> str:
    data = await weather(city)  # expect: PT001
    return f"{city}: {weather_helpers.fmt_temp(data['temp'])}"


@outlook.handler()
async def last_seen(ctx: Context) -> float:
    return stamp()  # expect: PT002
