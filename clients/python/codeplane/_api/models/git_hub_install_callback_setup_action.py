from enum import StrEnum


class GitHubInstallCallbackSetupAction(StrEnum):
    INSTALL = "install"
    REQUEST = "request"
    UPDATE = "update"

    def __str__(self) -> str:
        return str(self.value)
