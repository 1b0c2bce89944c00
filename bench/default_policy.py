"""What restate-server's own default retry policy costs a naive agent whose model changed its mind, run once.

    .venv/bin/python bench/default_policy.py

Reads the default retry policy from the lab's server itself (`restate-server --dump-config`), then runs the
row naive-changed-default-policy: the deck's naive agent with no retry policy of its own, under the changed
stub, killed in its pause and back 1.25 s later. Every retry after that replays into a journal mismatch and
pays one model call, until the server's policy pauses the invocation: on 1.7.12 about an hour. Prints and
writes (docs/benchmarks/tables/default-policy.md) the calls paid, the time to pause and the dollars at
gpt-4o-mini, beside what the policy predicts for the run's measured down time (lab/_policy.py, the model the
retry-policy curve confirms at 1 to 20 attempts).
"""

from __future__ import annotations

import time

from _docs import load_average, write_table

from paidtwice.deck import (
    Backoff,
    Deck,
    Experiment,
    experiment_by_name,
    predict_paid_calls,
    server_default_policy,
)
from paidtwice.engine import RestateServer
from paidtwice.lab import Lab

ROW = "naive-changed-default-policy"


def main() -> None:
    row = experiment_by_name(ROW)
    assert isinstance(row, Experiment)
    loads = [load_average()]
    started = time.monotonic()
    with Lab(echo=lambda message: None) as lab:
        server = lab.server
        assert isinstance(server, RestateServer)
        policy = server_default_policy(server.config(), version=server.version)
        backoff = policy.backoff
        print(f"the server's default: {policy.describe()} (read from {policy.read_from})")
        print(
            f"nominal backoff before the pause: {backoff.total_wait() / 60:.1f} min "
            "(up to 30% more with jitter)"
        )
        record = Deck(lab).run(row)
    loads.append(load_average())
    prediction = predict_paid_calls(
        Backoff(backoff.initial, backoff.factor, backoff.maximum, backoff.max_attempts),
        record.down_time or 0.0,
    )
    low, high = prediction.range
    predicted = str(low) if low == high else f"{low} to {high}"
    killed = record.killed_at or 0.0
    to_pause = record.wall_time - killed
    print(
        f"{record.status} after {record.model_calls} model calls ({record.mismatches} RT0016, "
        f"{record.attempts} attempts, {record.attempts_while_down} while down); predicted {predicted}"
    )
    print(
        f"time from the kill to the pause: {to_pause / 3600:.2f} h; "
        f"the run: {record.wall_time / 3600:.2f} h; "
        f"${record.cost_usd:.6f} at {record.price_model} (${record.extra_cost_usd:.6f} beyond a clean run)"
    )
    print(f"bench took {time.monotonic() - started:.0f} s; the row's figures match: {record.matches}")
    write_table(
        "default-policy",
        ["figure", "measured", "predicted from the policy"],
        [
            ["the server's default retry policy", policy.describe(), f"read by `{policy.read_from}`"],
            ["final status", record.status, policy.on_max_attempts + "d"],
            ["model calls paid", str(record.model_calls), predicted],
            ["journal mismatches (RT0016)", str(record.mismatches), str(low - 1)],
            ["attempts", str(record.attempts), str(backoff.max_attempts)],
            [
                "time from the kill to the pause",
                f"{to_pause / 3600:.2f} h ({to_pause / 60:.0f} min)",
                f"{backoff.total_wait() / 60:.0f} to {backoff.total_wait() * 1.3 / 60:.0f} min",
            ],
            [f"dollars at {record.price_model}", f"${record.cost_usd:.6f}", ""],
            ["dollars beyond a clean run", f"${record.extra_cost_usd:.6f}", ""],
        ],
        load=f"{min(loads)} to {max(loads)}",
        note=f"One run of `{ROW}` (kill in the pause, {record.down_time or 0:.2f} s down); "
        f"{record.prices_as_of} prices.",
    )


if __name__ == "__main__":
    main()
