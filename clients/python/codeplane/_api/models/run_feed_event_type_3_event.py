from enum import StrEnum


class RunFeedEventType3Event(StrEnum):
    RESET = "reset"

    def __str__(self) -> str:
        return str(self.value)
