from enum import StrEnum


class NotificationEndpointEventsItem(StrEnum):
    ANALYSIS_COMPLETED = "analysis.completed"
    ANALYSIS_FAILED = "analysis.failed"
    RUN_CANCELLED = "run.cancelled"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"

    def __str__(self) -> str:
        return str(self.value)
