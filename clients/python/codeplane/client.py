"""The hand-written layer over the generated client (``codeplane._api``).

``Codeplane.api`` is the generated ``AuthenticatedClient``: every operation is a
module under ``codeplane._api.api`` (``runs.get_run.sync_detailed(client=cp.api, ...)``),
typed from the OpenAPI document by openapi-python-client. What generators do
badly is here: the log stream as an iterator of typed events that resumes
after a dropped connection with Last-Event-ID, waiting for a run or an
analysis to end, iterating a list across its pages, and errors raised as
exceptions carrying the API's ``detail``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx

from ._api.api.analyses import get_analysis
from ._api.api.runs import get_run
from ._api.client import AuthenticatedClient
from ._api.models.analysis import Analysis
from ._api.models.run import Run
from ._api.types import UNSET, Response
from .errors import CodeplaneError, WaitTimeout, error_from
from .events import EndEvent, EventStreamParser, LogEvent, to_log_event

T = TypeVar("T")
TERMINAL = frozenset({"completed", "failed", "cancelled"})


class Codeplane:
    """A client of one codeplane server: ``Codeplane("https://codeplane.example.com", "cp_...")``."""

    def __init__(self, base_url: str, token: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api = AuthenticatedClient(base_url=self.base_url, token=token, timeout=httpx.Timeout(timeout), raise_on_unexpected_status=False)
        self._token = token

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> Codeplane:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    @staticmethod
    def unwrap(response: Response[Any]) -> Any:
        """The parsed body of a generated operation's ``sync_detailed`` answer, or its error raised."""
        if not 200 <= int(response.status_code) < 300:
            raise error_from(int(response.status_code), response.content, response.headers)
        return response.parsed

    def call(self, operation: Any, **kwargs: Any) -> Any:
        """Calls a generated operation module (``runs.get_run``) and unwraps its answer."""
        return self.unwrap(operation.sync_detailed(client=self.api, **kwargs))

    def paginate(self, operation: Any, **kwargs: Any) -> Iterator[Any]:
        """Every item of a list operation (``repositories.list_repositories``), page after page."""
        cursor: Any = UNSET
        while True:
            page = self.call(operation, cursor=cursor, **kwargs)
            yield from page.items
            if not isinstance(page.next_cursor, str) or not page.next_cursor:
                return
            cursor = page.next_cursor

    def get_run(self, run_id: str) -> Run:
        return self.call(get_run, run_id=run_id)  # type: ignore[no-any-return]

    def get_analysis(self, repository_id: str, commit: str) -> Analysis:
        return self.call(get_analysis, repository_id=repository_id, commit_hash=commit)  # type: ignore[no-any-return]

    def wait_for_run(self, run_id: str, *, timeout: float | None = None, interval: float = 0.5) -> Run:
        """Returns the run once it has ended (completed, failed or cancelled)."""
        return self._wait(f"run {run_id}", lambda: self.get_run(run_id), timeout, interval)

    def wait_for_analysis(self, repository_id: str, commit: str, *, timeout: float | None = None, interval: float = 0.5) -> Analysis:
        """Returns the analysis of the commit once it has ended."""
        return self._wait(f"the analysis of {commit}", lambda: self.get_analysis(repository_id, commit), timeout, interval)

    def stream_run_logs(self, run_id: str, *, last_event_id: str | None = None, max_reconnects: int = 10, max_delay: float = 10.0) -> Iterator[LogEvent]:
        """A run's log stream: its phases, setup lines, timeline, stdout and stderr lines, then ``end``."""
        return self._stream(f"/v1/runs/{run_id}/logs/stream", last_event_id, max_reconnects, max_delay)

    def stream_analysis_logs(
        self, repository_id: str, commit: str, *, last_event_id: str | None = None, max_reconnects: int = 10, max_delay: float = 10.0
    ) -> Iterator[LogEvent]:
        """An analysis's progress stream: its phases and progress lines, then ``end``."""
        return self._stream(f"/v1/repositories/{repository_id}/analysis/{commit}/logs/stream", last_event_id, max_reconnects, max_delay)

    def _wait(self, what: str, read: Callable[[], T], timeout: float | None, interval: float) -> T:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = interval
        while True:
            current = read()
            if str(getattr(current, "status", "")) in TERMINAL:
                return current
            if deadline is not None and time.monotonic() + delay > deadline:
                raise WaitTimeout(f"{what} did not end within {timeout} s")
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _stream(self, path: str, last_id: str | None, max_reconnects: int, max_delay: float) -> Iterator[LogEvent]:
        """Follows an event stream to its ``end``, reconnecting with Last-Event-ID after a drop, a 5xx or a 429."""
        failures = 0
        delay: float | None = None
        http = self.api.get_httpx_client()
        while True:
            reason: str
            headers = {"accept": "text/event-stream", **({"last-event-id": last_id} if last_id else {})}
            try:
                with http.stream("GET", path, headers=headers, timeout=httpx.Timeout(30.0, read=None)) as res:
                    if res.status_code >= 300:
                        err = error_from(res.status_code, res.read(), res.headers)
                        if res.status_code < 500 and res.status_code != 429:
                            raise err
                        reason, delay = str(err), err.retry_after or delay
                    else:
                        parser = EventStreamParser()
                        for raw in parser.feed(res.iter_lines()):
                            if raw.id is not None:
                                last_id = raw.id
                            failures = 0
                            event = to_log_event(raw)
                            if event is None:
                                continue
                            yield event
                            if isinstance(event, EndEvent):
                                return
                        if parser.retry is not None:
                            delay = parser.retry / 1000
                        reason = "the server closed the stream before its end event"
            except CodeplaneError:
                raise
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            failures += 1
            if failures > max_reconnects:
                raise ConnectionError(f"{path}: gave up after {max_reconnects} reconnects ({reason})")
            time.sleep(min((delay or 1.0) * 2 ** min(failures - 1, 3), max_delay))
