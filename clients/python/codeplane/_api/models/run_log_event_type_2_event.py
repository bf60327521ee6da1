from enum import StrEnum


class RunLogEventType2Event(StrEnum):
    TIMELINE = "timeline"

    def __str__(self) -> str:
        return str(self.value)
