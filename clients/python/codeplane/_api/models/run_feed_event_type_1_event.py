from enum import StrEnum


class RunFeedEventType1Event(StrEnum):
    RUN = "run"

    def __str__(self) -> str:
        return str(self.value)
