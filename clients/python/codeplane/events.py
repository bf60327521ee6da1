"""The log stream's events (docs/users/sse.md), typed, and the text/event-stream parsing that yields them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Union

Status = Literal["pending", "preprocessing", "running", "completed", "failed", "cancelled"]


@dataclass(frozen=True)
class StatusEvent:
    """A phase the run or analysis went through, once each, in order."""

    id: str
    status: Status
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class LineEvent:
    """One line of output; ``seq`` orders stdout and stderr together."""

    type: Literal["stdout", "stderr"]
    id: str
    seq: int
    ts: str
    line: str


@dataclass(frozen=True)
class SetupEvent:
    """One line of the install of the environment the run waits for."""

    id: str
    n: int
    ts: str
    line: str
    type: Literal["setup"] = "setup"


@dataclass(frozen=True)
class TimelineEvent:
    """The run's whole timeline, each time it grows."""

    timeline: list[dict[str, object]] = field(default_factory=list)
    type: Literal["timeline"] = "timeline"


@dataclass(frozen=True)
class EndEvent:
    """Every line was sent and the workload is over; the stream ends after it."""

    status: Status
    exit_code: int | None
    type: Literal["end"] = "end"


LogEvent = Union[StatusEvent, LineEvent, SetupEvent, TimelineEvent, EndEvent]


@dataclass(frozen=True)
class RawEvent:
    event: str
    data: str
    id: str | None


class EventStreamParser:
    """Turns an event stream's lines (already split at \\n, \\r\\n or \\r) into raw events."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self.retry: int | None = None

    def feed(self, lines: Iterable[str]) -> Iterator[RawEvent]:
        for line in lines:
            event = self._line(line)
            if event is not None:
                yield event

    def _line(self, line: str) -> RawEvent | None:
        if line == "":
            event = RawEvent(self._event or "message", "\n".join(self._data), self._id) if self._data else None
            self._event, self._data, self._id = "", [], None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self.retry = int(value)
        return None


def to_log_event(raw: RawEvent) -> LogEvent | None:
    """The typed event a raw one stands for; None for a type this SDK does not know (a newer server's)."""
    data = json.loads(raw.data)
    rid = raw.id or ""
    if raw.event == "status":
        return StatusEvent(rid, data["status"])
    if raw.event in ("stdout", "stderr"):
        return LineEvent(raw.event, rid, int(data["seq"]), data["ts"], data["line"])  # type: ignore[arg-type]
    if raw.event == "setup":
        return SetupEvent(rid, int(data["n"]), data["ts"], data["line"])
    if raw.event == "timeline":
        return TimelineEvent(list(data["timeline"]))
    if raw.event == "end":
        return EndEvent(data["status"], data.get("exit_code"))
    return None
