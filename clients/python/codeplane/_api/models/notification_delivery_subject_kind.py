from enum import StrEnum


class NotificationDeliverySubjectKind(StrEnum):
    ANALYSIS = "analysis"
    RUN = "run"

    def __str__(self) -> str:
        return str(self.value)
