"""PT003: functions of the random module and methods of a random.Random instance."""

import random

import restate
from restate import Context

picker = restate.Service("Picker")

RNG = random.Random()
GREETINGS = ["Hi", "Hello", "Hey"]


@picker.handler()
async def greet(ctx: Context, name: str) -> str:
    return f"{random.choice(GREETINGS)}, {name}"  # expect: PT003


@picker.handler()
async def sample(ctx: Context, items: list[str]) -> list[str]:
    k = random.randint(1, len(items))  # expect: PT003
    random.shuffle(items)  # expect: PT003
    return items[:k]


@picker.handler()
async def jitter(ctx: Context, base: float) -> float:
    if random.random() < 0.5:  # expect: PT003
        return base
    return base * RNG.uniform(0.9, 1.1)  # expect: PT003
