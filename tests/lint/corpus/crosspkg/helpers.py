"""Helpers with no handlers: findings are reported where a handler calls them, never here."""

import time

import httpx

WEATHER_API = "https://weather.example.com/v1"


async def fetch_weather(city: str) -> dict:
    async with httpx.AsyncClient(base_url=WEATHER_API, timeout=5.0) as http:
        resp = await http.get("/current", params={"city": city})
    resp.raise_for_status()
    return resp.json()


def stamp() -> float:
    return time.time()


def fmt_temp(celsius: float) -> str:
    return f"{celsius:.1f} C"
