"""Errors as the API states them, raised as exceptions carrying its ``detail``.

Every failure answers ``{"detail": "..."}``; a validation failure (422)
``{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ValidationIssue:
    loc: list[str | int]
    msg: str
    type: str


class CodeplaneError(Exception):
    """Any non-2xx answer of the API."""

    def __init__(self, status: int, detail: str | list[ValidationIssue], request_id: str | None, retry_after: float | None = None) -> None:
        self.status = status
        self.detail = detail
        self.request_id = request_id
        self.retry_after = retry_after
        text = detail if isinstance(detail, str) else "; ".join(f"{'.'.join(map(str, i.loc))}: {i.msg}" for i in detail)
        super().__init__(f"{status}: {text}")


class ValidationError(CodeplaneError):
    """422: the request was refused as invalid; ``issues`` say where and why."""

    def __init__(self, issues: list[ValidationIssue], request_id: str | None) -> None:
        super().__init__(422, issues, request_id)
        self.issues = issues


class AuthError(CodeplaneError):
    """401 or 403: no valid credential, or one without the operation's scope."""


class NotFoundError(CodeplaneError):
    """404: no such resource in the caller's account (another account's is a 404 too)."""


class WaitTimeout(TimeoutError):
    """Waiting for a run or an analysis took longer than the caller allowed."""


def error_from(status: int, content: bytes, headers: Mapping[str, str]) -> CodeplaneError:
    """The exception a non-2xx answer stands for, from its status, body and headers."""
    lower = {k.lower(): v for k, v in headers.items()}
    request_id = lower.get("x-request-id")
    try:
        body: Any = json.loads(content) if content else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    raw = body.get("detail") if isinstance(body, dict) else body
    if status == 422 and isinstance(raw, list) and all(isinstance(i, dict) and "loc" in i for i in raw):
        return ValidationError([ValidationIssue(list(i["loc"]), str(i.get("msg", "")), str(i.get("type", ""))) for i in raw], request_id)
    detail = raw if isinstance(raw, str) else (f"HTTP {status}" if raw is None else json.dumps(raw))
    if status in (401, 403):
        return AuthError(status, detail, request_id)
    if status == 404:
        return NotFoundError(status, detail, request_id)
    retry = lower.get("retry-after")
    return CodeplaneError(status, detail, request_id, float(retry) if retry and retry.isdigit() else None)
