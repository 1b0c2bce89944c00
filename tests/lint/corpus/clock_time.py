"""PT002: time.time, time.time_ns, time.monotonic and time.perf_counter read inside handlers."""

import time

import restate
from restate import Context

jobs = restate.Service("Jobs")


@jobs.handler()
async def enqueue(ctx: Context, job: dict) -> dict:
    job["queued_at"] = time.time()  # expect: PT002
    job["seq"] = time.time_ns()  # expect: PT002
    return job


@jobs.handler()
async def run_step(ctx: Context, step: str) -> float:
    started = time.monotonic()  # expect: PT002
    await ctx.run_typed("step", do_step, step=step)
    return time.monotonic() - started  # expect: PT002


@jobs.handler()
async def bench(ctx: Context, n: int) -> float:
    t0 = time.perf_counter()  # expect: PT002
    total = sum(i * i for i in range(n))
    return time.perf_counter() - t0 + total * 0  # expect: PT002


def do_step(step: str) -> str:
    time.sleep(0.1)
    return step.upper()
