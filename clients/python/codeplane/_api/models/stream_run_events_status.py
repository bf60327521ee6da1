from enum import StrEnum


class StreamRunEventsStatus(StrEnum):
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    FAILED = "failed"
    PENDING = "pending"
    PREPROCESSING = "preprocessing"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
