from enum import StrEnum


class AnalysisLogEventType0Event(StrEnum):
    STATUS = "status"

    def __str__(self) -> str:
        return str(self.value)
