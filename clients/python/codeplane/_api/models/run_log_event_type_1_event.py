from enum import StrEnum


class RunLogEventType1Event(StrEnum):
    SETUP = "setup"

    def __str__(self) -> str:
        return str(self.value)
