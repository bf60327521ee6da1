from enum import StrEnum


class RunLogEventType4Event(StrEnum):
    END = "end"

    def __str__(self) -> str:
        return str(self.value)
