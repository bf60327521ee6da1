from enum import StrEnum


class RunSetupLogStatusType2Type1(StrEnum):
    BUILDING = "building"
    FAILED = "failed"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
