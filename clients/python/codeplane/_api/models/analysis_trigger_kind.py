from enum import StrEnum


class AnalysisTriggerKind(StrEnum):
    API = "api"
    PULL_REQUEST = "pull_request"
    PUSH = "push"

    def __str__(self) -> str:
        return str(self.value)
