"""Shared helpers for A2A transport clients."""

from __future__ import annotations

import base64
import json
import os

from typing import TYPE_CHECKING, Any, Iterator


if TYPE_CHECKING:
    import httpx

A2A_VERSION_HEADER = "A2A-Version"
A2A_VERSION = "1.0"


def auth_headers() -> dict[str, str]:
    """Authentication headers from the environment, as the TCK's authentication guide describes.

    A2A_AUTH_TYPE=bearer|basic|apikey|custom with A2A_AUTH_TOKEN (A2A_AUTH_USERNAME and
    A2A_AUTH_PASSWORD for basic; A2A_AUTH_HEADER names the header for apikey and custom),
    and A2A_AUTH_HEADERS, a JSON object of further headers. Nothing set: no headers.
    """
    headers: dict[str, str] = {}
    kind = os.environ.get("A2A_AUTH_TYPE", "").lower()
    token = os.environ.get("A2A_AUTH_TOKEN", "")
    if kind == "bearer" and token:
        headers["Authorization"] = f"Bearer {token}"
    elif kind == "basic":
        pair = f"{os.environ.get('A2A_AUTH_USERNAME', '')}:{os.environ.get('A2A_AUTH_PASSWORD', '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif kind in ("apikey", "custom") and token:
        default = "X-API-Key" if kind == "apikey" else "Authorization"
        headers[os.environ.get("A2A_AUTH_HEADER", default)] = token
    extra = os.environ.get("A2A_AUTH_HEADERS")
    if extra:
        headers.update(json.loads(extra))
    return headers


def _build_params(**kwargs: Any) -> dict:
    """Build a params dict, omitting None values."""
    return {k: v for k, v in kwargs.items() if v is not None}


def _stream_sse(response: httpx.Response) -> Iterator[dict]:
    """Yield parsed SSE events from a streaming httpx response.

    Reads the response body incrementally so that events are available
    as soon as they arrive rather than waiting for the stream to close.
    """
    for raw_line in response.iter_lines():
        line = raw_line.strip()
        if line.startswith("data:"):
            data = line[len("data:"):].strip()
            if data:
                yield json.loads(data)
