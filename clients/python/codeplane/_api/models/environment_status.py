from enum import StrEnum


class EnvironmentStatus(StrEnum):
    BUILDING = "building"
    FAILED = "failed"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
