from enum import StrEnum


class CreateRunEnvironment(StrEnum):
    AUTO = "auto"
    NONE = "none"

    def __str__(self) -> str:
        return str(self.value)
