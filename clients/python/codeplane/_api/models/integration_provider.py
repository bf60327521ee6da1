from enum import StrEnum


class IntegrationProvider(StrEnum):
    GITHUB = "github"

    def __str__(self) -> str:
        return str(self.value)
