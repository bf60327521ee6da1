from enum import StrEnum


class RunTimelineItemCache(StrEnum):
    BUILT = "built"
    HIT = "hit"

    def __str__(self) -> str:
        return str(self.value)
