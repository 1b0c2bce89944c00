"""`watch --metrics HOST:PORT`: the latest snapshot as Prometheus text (prometheus-client). Port 0 picks a
free port, which the watch says on stderr.

Labelled by service, handler and reason, never by invocation: an RT0016 storm must not become a label
explosion in the user's Prometheus. Every family is rebuilt from the latest snapshot at each scrape (a
custom collector), so a service whose invocations all recovered drops out instead of staying at its last
value.

    paidtwice_stuck_invocations{service,handler,reason,state}  invocations retrying or paused (state), by
                                                               their last failure (reason)
    paidtwice_stuck_attempts{service,handler,reason,state}     attempts they have made so far (where known)
    paidtwice_repaid_model_calls{service,handler}         model calls paid again outside the journal (profile)
    paidtwice_repaid_usd{service,handler}                 their price in dollars (profile, --price-model)
    paidtwice_burn_usd_per_hour{service,handler}          dollars per hour at the current retry pace
    paidtwice_paused_total{service,handler}               invocations this watch saw become paused
    paidtwice_watch_up                                     1 if the last read of the admin API worked
    paidtwice_watch_last_read_timestamp_seconds            when the admin API was last read
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from paidtwice._exceptions import UsageError
from paidtwice.engine import PortLease, lease_port
from paidtwice.results import WatchSnapshot

__all__ = ["MetricsServer", "parse_listen"]


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets; port 0: a free one); UsageError in one line otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise UsageError(f"--metrics {text!r} is not HOST:PORT (e.g. 127.0.0.1:9464; port 0: a free one)")
    return host.strip("[]"), int(port)


class _Latest(Collector):
    def __init__(self) -> None:
        self.snapshot: WatchSnapshot | None = None
        self.up = 0.0
        self.read_at = 0.0
        self.paused: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            snapshot, up, read_at, paused = self.snapshot, self.up, self.read_at, Counter(self.paused)
        stuck = GaugeMetricFamily(
            "paidtwice_stuck_invocations",
            "Invocations retrying after a failure, or paused.",
            labels=["service", "handler", "reason", "state"],
        )
        attempts = GaugeMetricFamily(
            "paidtwice_stuck_attempts",
            "Attempts the stuck invocations have made so far (where the server or this watch knows).",
            labels=["service", "handler", "reason", "state"],
        )
        calls = GaugeMetricFamily(
            "paidtwice_repaid_model_calls",
            "Model calls paid again outside the journal by stuck invocations (estimated from --profile).",
            labels=["service", "handler"],
        )
        usd = GaugeMetricFamily(
            "paidtwice_repaid_usd",
            "Dollars of the model calls paid again (estimated from --profile, at --price-model).",
            labels=["service", "handler"],
        )
        burn = GaugeMetricFamily(
            "paidtwice_burn_usd_per_hour",
            "Dollars per hour the retrying invocations cost at their current retry pace.",
            labels=["service", "handler"],
        )
        by_reason: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
        money: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for s in snapshot.stuck if snapshot else ():
            entry = by_reason[(s.service, s.handler, s.reason, s.state)]
            entry[0] += 1
            entry[1] += s.attempts or 0
            spent = money[(s.service, s.handler)]
            spent[0] += s.repaid_calls or 0.0
            spent[1] += s.repaid_usd or 0.0
            spent[2] += s.burn_usd_per_hour or 0.0
        for labels, (n, tries) in sorted(by_reason.items()):
            stuck.add_metric(list(labels), n)
            attempts.add_metric(list(labels), tries)
        for pair, (n_calls, dollars, per_hour) in sorted(money.items()):
            calls.add_metric(list(pair), n_calls)
            usd.add_metric(list(pair), dollars)
            burn.add_metric(list(pair), per_hour)
        paused_total = CounterMetricFamily(
            "paidtwice_paused",
            "Invocations this watch saw become paused since it started.",
            labels=["service", "handler"],
        )
        for pair, n in sorted(paused.items()):
            paused_total.add_metric(list(pair), n)
        yield from (stuck, attempts, calls, usd, burn, paused_total)
        yield GaugeMetricFamily("paidtwice_watch_up", "1 if the last read of the admin API worked.", value=up)
        yield GaugeMetricFamily(
            "paidtwice_watch_last_read_timestamp_seconds",
            "When the admin API was last read (seconds since the epoch).",
            value=read_at,
        )


class MetricsServer:
    """Serves /metrics on HOST:PORT from a thread until `close`; port 0 serves on a free port (`port`)."""

    def __init__(self, host: str, port: int) -> None:
        self._latest = _Latest()
        registry = CollectorRegistry(auto_describe=True)
        registry.register(self._latest)
        # Port 0 is leased, not left to the kernel: its pick could be the port a paidtwice lab on this
        # machine leased for an agent that is down for its restart.
        self._lease: PortLease | None = lease_port() if port == 0 else None
        listen = self._lease.port if self._lease is not None else port
        try:
            self._server, self._thread = start_http_server(listen, addr=host, registry=registry)
        except OSError as err:
            self._release()
            raise UsageError(f"--metrics {host}:{port}: cannot listen there ({err.strerror})") from None
        self.port: int = self._server.server_port
        """The port it serves on."""

    @property
    def server(self) -> WSGIServer:
        return self._server

    def update(self, snapshot: WatchSnapshot, *, became_paused: list[tuple[str, str]]) -> None:
        with self._latest.lock:
            self._latest.snapshot = snapshot
            self._latest.up = 1.0
            self._latest.read_at = snapshot.taken_at
            self._latest.paused.update(became_paused)

    def failed(self) -> None:
        with self._latest.lock:
            self._latest.up = 0.0

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5.0)
        self._release()

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
