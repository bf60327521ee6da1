from enum import StrEnum


class RunFeedEventType2Event(StrEnum):
    DELETED = "deleted"

    def __str__(self) -> str:
        return str(self.value)
