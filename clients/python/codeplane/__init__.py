"""The Python client of a codeplane server.

    from codeplane import Codeplane
    with Codeplane("https://codeplane.example.com", "cp_...") as cp:
        run = cp.wait_for_run(run_id)
        for event in cp.stream_run_logs(run_id):
            print(event)
"""

from .client import Codeplane
from .errors import AuthError, CodeplaneError, NotFoundError, ValidationError, ValidationIssue, WaitTimeout
from .events import EndEvent, LineEvent, LogEvent, SetupEvent, StatusEvent, TimelineEvent

__all__ = [
    "AuthError",
    "Codeplane",
    "CodeplaneError",
    "EndEvent",
    "LineEvent",
    "LogEvent",
    "NotFoundError",
    "SetupEvent",
    "StatusEvent",
    "TimelineEvent",
    "ValidationError",
    "ValidationIssue",
    "WaitTimeout",
]
