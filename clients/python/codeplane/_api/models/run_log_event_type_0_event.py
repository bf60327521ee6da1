from enum import StrEnum


class RunLogEventType0Event(StrEnum):
    STATUS = "status"

    def __str__(self) -> str:
        return str(self.value)
