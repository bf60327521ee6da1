from enum import StrEnum


class RunFeedEventType0Event(StrEnum):
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
