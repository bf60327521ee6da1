from enum import StrEnum


class AnalysisLogEventType1Event(StrEnum):
    STDERR = "stderr"
    STDOUT = "stdout"

    def __str__(self) -> str:
        return str(self.value)
