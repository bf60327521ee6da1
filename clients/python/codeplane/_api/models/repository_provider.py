from enum import StrEnum


class RepositoryProvider(StrEnum):
    GIT = "git"
    GITHUB = "github"

    def __str__(self) -> str:
        return str(self.value)
