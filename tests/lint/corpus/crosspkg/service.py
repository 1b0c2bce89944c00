"""Handlers calling helpers of the same package via `from .helpers import` and `from . import helpers`."""

import restate
from restate import Context

from . import helpers
from .helpers import fetch_weather, fmt_temp

forecast = restate.Service("Forecast")


@forecast.handler()
async def current(ctx: Context, city: str) -> dict:
    data = await fetch_weather(city)  # expect: PT001
    return {"city": city, "temp": fmt_temp(data["temp"]), "at": helpers.stamp()}  # expect: PT002


@forecast.handler()
async def journaled(ctx: Context, city: str) -> dict:
    data = await ctx.run_typed("weather", fetch_weather, city=city)
    at = await ctx.run_typed("stamp", helpers.stamp)
    return {"city": city, "temp": helpers.fmt_temp(data["temp"]), "at": at}
