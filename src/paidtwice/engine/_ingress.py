"""Client for Restate's ingress: send an invocation, attach to its result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from paidtwice._exceptions import PaidtwiceError, ServerUnreachable
from paidtwice.engine._http import http

__all__ = ["IngressClient", "Refused"]


class Refused(PaidtwiceError):
    """The ingress refused an invocation (its answer is in the message)."""


@dataclass
class IngressClient:
    """Client for the ingress at `url` (e.g. http://127.0.0.1:8080)."""

    url: str
    timeout: float = 30.0

    def send(
        self,
        service: str,
        handler: str,
        body: Any,
        *,
        key: str | None = None,
        idempotency_key: str | None = None,
        content_type: str | None = None,
    ) -> str:
        """Submit an invocation without waiting for it; returns its id (`inv_...`). A Virtual Object's or a
        Workflow's handler is called with its `key`. The body is sent as JSON, or, with a `content_type`
        that is not JSON, as bytes of that type (a string as UTF-8). `Refused` when the ingress refuses it."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        raw: bytes | None = None
        if content_type and "json" not in content_type and body is not None:
            raw = body if isinstance(body, bytes) else str(body).encode()
            headers["content-type"] = content_type
        target = f"{service}/{quote(key, safe='')}/{handler}" if key is not None else f"{service}/{handler}"
        try:
            response = http().post(
                f"{self.url}/{target}/send",
                json=body if raw is None else None,
                content=raw,
                headers=headers,
                timeout=self.timeout,
            )
        except httpx.HTTPError as err:
            raise ServerUnreachable(f"no Restate ingress answers at {self.url} ({err})") from err
        if response.status_code >= 300:
            raise Refused(
                f"ingress refused {service}/{handler}: {response.status_code} {response.text[:200]}"
            )
        return str(response.json()["invocationId"])

    def attach(self, invocation_id: str, *, timeout: float = 120.0) -> httpx.Response:
        """Wait for the invocation's result and return the raw answer."""
        try:
            return http().get(f"{self.url}/restate/attach/{invocation_id}", timeout=timeout)
        except httpx.HTTPError as err:
            raise ServerUnreachable(f"attach to {invocation_id} at {self.url} failed: {err}") from err

    def output(self, invocation_id: str) -> str | None:
        """The invocation's output as records keep it (None when attaching does not return it): JSON in one
        canonical form, so outputs compare equal however they were spaced; any other body (a handler's
        bytes) as text; "" for an empty output (a handler that returns None)."""
        response = self.attach(invocation_id, timeout=30.0)
        if response.status_code != 200:
            return None
        try:
            return json.dumps(json.loads(response.content))
        except ValueError:
            return response.content.decode(errors="replace")

    def resolve_awakeable(self, awakeable_id: str, value: Any) -> None:
        """Resolve an awakeable with a JSON value, as a person's reply would (`POST
        /restate/awakeables/{id}/resolve`)."""
        try:
            response = http().post(
                f"{self.url}/restate/awakeables/{quote(awakeable_id, safe='')}/resolve",
                json=value,
                timeout=self.timeout,
            )
        except httpx.HTTPError as err:
            raise ServerUnreachable(f"no Restate ingress answers at {self.url} ({err})") from err
        if response.status_code >= 300:
            raise PaidtwiceError(
                f"ingress refused to resolve awakeable {awakeable_id}: {response.status_code} "
                f"{response.text[:200]}"
            )
