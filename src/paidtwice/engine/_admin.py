"""Typed client for Restate's admin API (deployments and invocation management).

Every request and its answer is appended to `log`, so a run can show the user the admin conversation in
order (the deck's recovery walk is read from it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from paidtwice._exceptions import AdminError, NotFound, ServerUnreachable
from paidtwice.engine._http import http
from paidtwice.engine._startup import load_timeout

__all__ = ["AdminCall", "AdminClient", "Deployment"]


@dataclass(frozen=True)
class AdminCall:
    """One admin API request and what it answered."""

    method: str
    """HTTP method."""
    path: str
    """Path with query string, as sent."""
    status: int
    """HTTP status of the answer."""
    answer: str
    """The answer's body, trimmed to a readable length."""
    at: float
    """Wall-clock time the answer arrived (seconds since the epoch)."""


@dataclass(frozen=True)
class Deployment:
    """A registered deployment."""

    id: str
    """Deployment id (`dp_...`)."""
    uri: str
    """The endpoint URI Restate calls."""
    created: bool
    """True if this registration made a new deployment (201), False if it already existed (200)."""
    keyed: frozenset[str] = frozenset()
    """The deployment's services that are called with a key: Virtual Objects and Workflows."""
    services: frozenset[str] = frozenset()
    """Every service the deployment serves."""
    registered: float = 0.0
    """When the server took the registration (monotonic), stamped while registrations to one server go one
    at a time: of two deployments serving a service, the later is the one the server calls."""
    retry_policies: tuple[tuple[str, str], ...] = ()
    """The invocation retry policy the server applies to each handler (SERVICE/HANDLER), in words, as the
    registration's answer gives it: the handler's own settings over its service's, the service's over the
    server's defaults."""

    def retry_policy(self, service: str, handler: str) -> str:
        """The retry policy in force for `service`/`handler`, in words; "" when the registration did not
        list the handler."""
        return dict(self.retry_policies).get(f"{service}/{handler}", "")


_REGISTER_RETRY_S = 30.0
_REGISTRATION_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def _registration_lock(url: str) -> threading.Lock:
    with _LOCKS_LOCK:
        return _REGISTRATION_LOCKS.setdefault(url, threading.Lock())


@dataclass
class AdminClient:
    """Client for the admin API at `url` (e.g. http://127.0.0.1:9070)."""

    url: str
    timeout: float = 30.0
    log: list[AdminCall] = field(default_factory=list)

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        ok: tuple[int, ...] = (200, 201, 202),
        timeout: float | None = None,
    ) -> httpx.Response:
        try:
            response = http().request(method, self.url + path, json=body, timeout=timeout or self.timeout)
        except httpx.ConnectError as err:
            raise ServerUnreachable(
                f"no Restate admin API answers at {self.url} ({err}); is the server running?"
            ) from err
        except httpx.HTTPError as err:
            raise ServerUnreachable(f"admin API at {self.url} failed: {err}") from err
        self.log.append(AdminCall(method, path, response.status_code, response.text[:500], time.time()))
        if response.status_code not in ok:
            message = _error_message(response)
            if response.status_code == 404:
                raise NotFound(f"{method} {path}: {message}")
            raise AdminError(
                f"{method} {path} answered {response.status_code}: {message}",
                status=response.status_code,
                body=response.text,
            )
        return response

    def health(self) -> bool:
        try:
            return http().get(self.url + "/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def version(self) -> str:
        return str(self._request("GET", "/version").json().get("version", "unknown"))

    def register_deployment(self, uri: str, *, force: bool = False) -> Deployment:
        """Register the endpoint at `uri`. `force` overwrites an existing one: for local use only.

        Registrations to one server go one at a time from this process: each rewrites the whole schema,
        and many at once (a concurrent deck registers a deployment per row) make the server give up on its
        own retries of the schema update and answer 500. One that still fails that way is tried again; a
        registration is idempotent for its URI.
        """
        # The server discovers the endpoint before it answers: an agent loading on a busy machine takes as
        # long as any load, so the wait is the lab's load timeout, and a request that timed out is repeated.
        wait = max(self.timeout, load_timeout())
        with _registration_lock(self.url):
            deadline = time.monotonic() + max(_REGISTER_RETRY_S, wait)
            while True:
                try:
                    response = self._request(
                        "POST", "/deployments", body={"uri": uri, "force": force}, timeout=wait
                    )
                    registered = time.monotonic()
                    break
                except AdminError as err:
                    if err.status < 500 or time.monotonic() > deadline:
                        raise
                except ServerUnreachable as err:
                    if not isinstance(err.__cause__, httpx.TimeoutException) or time.monotonic() > deadline:
                        raise
                time.sleep(0.5)
        answer = response.json()
        keyed = frozenset(
            str(service.get("name"))
            for service in answer.get("services", [])
            if service.get("ty") in ("VirtualObject", "Workflow")
        )
        services = frozenset(str(service.get("name")) for service in answer.get("services", []))
        return Deployment(
            id=answer["id"],
            uri=uri,
            created=response.status_code == 201,
            keyed=keyed,
            services=services,
            registered=registered,
            retry_policies=_retry_policies(answer),
        )

    def set_state(self, service: str, key: str, state: Mapping[str, bytes]) -> AdminCall:
        """Replace a Virtual Object's (or a Workflow's) state under `key` with `state`: each value is the
        bytes the SDK reads back (its default serde: JSON). The server applies it asynchronously (202)."""
        body = {"object_key": key, "new_state": {name: list(value) for name, value in state.items()}}
        self._request("POST", f"/services/{service}/state", body=body)
        return self.log[-1]

    def deployments(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/deployments").json().get("deployments", []))

    def kill(self, invocation_id: str) -> AdminCall:
        return self._invocation("kill", invocation_id)

    def cancel(self, invocation_id: str) -> AdminCall:
        return self._invocation("cancel", invocation_id)

    def pause(self, invocation_id: str) -> AdminCall:
        return self._invocation("pause", invocation_id)

    def purge(self, invocation_id: str) -> AdminCall:
        return self._invocation("purge", invocation_id)

    def resume(self, invocation_id: str, *, deployment: str | None = None) -> AdminCall:
        """Resume a paused invocation, on `deployment` (`dp_...`, "latest" or "keep") if given."""
        query = f"?deployment={deployment}" if deployment else ""
        return self._invocation("resume", invocation_id, query)

    def restart_as_new(
        self, invocation_id: str, *, from_entry: int | None = None, deployment: str | None = None
    ) -> str:
        """Restart a finished invocation as a new one; returns the new invocation's id.

        `from_entry` copies the journal prefix up to that entry; `deployment` goes only with it.
        """
        params = []
        if from_entry is not None:
            params.append(f"from={from_entry}")
        if deployment is not None:
            params.append(f"deployment={deployment}")
        query = ("?" + "&".join(params)) if params else ""
        self._invocation("restart-as-new", invocation_id, query)
        return str(json.loads(self.log[-1].answer)["new_invocation_id"])

    def _invocation(self, verb: str, invocation_id: str, query: str = "") -> AdminCall:
        self._request("PATCH", f"/invocations/{invocation_id}/{verb}{query}")
        return self.log[-1]


def _retry_policies(answer: Any) -> tuple[tuple[str, str], ...]:
    """Each handler's retry policy in a registration's answer, in words: a handler lists only the settings
    it sets itself (null where it sets none), its service all of them, the server's defaults filled in."""
    found = []
    for service in answer.get("services", []):
        policy = dict(service.get("retry_policy") or {})
        for handler in service.get("handlers", []):
            own = {k: v for k, v in (handler.get("retry_policy") or {}).items() if v is not None}
            found.append((f"{service.get('name')}/{handler.get('name')}", _policy_words({**policy, **own})))
    return tuple(found)


def _policy_words(policy: Mapping[str, Any]) -> str:
    """'first retry after 250ms, x2, at most 1m apart, 40 attempts, then pause'."""
    attempts = policy.get("max_attempts")
    return ", ".join(
        [
            f"first retry after {policy.get('initial_interval', '?')}",
            f"x{policy.get('exponentiation_factor', '?')}",
            f"at most {policy.get('max_interval', '?')} apart",
            f"{attempts} attempts" if attempts is not None else "no limit of attempts",
            f"then {str(policy.get('on_max_attempts', '?')).lower()}",
        ]
    )


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return response.text.strip()[:300]
