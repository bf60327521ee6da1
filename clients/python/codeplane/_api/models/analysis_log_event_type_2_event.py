from enum import StrEnum


class AnalysisLogEventType2Event(StrEnum):
    END = "end"

    def __str__(self) -> str:
        return str(self.value)
