from enum import StrEnum


class RunSetupLogStatusType3Type1(StrEnum):
    BUILDING = "building"
    FAILED = "failed"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
