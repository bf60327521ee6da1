from enum import StrEnum


class NotificationDeliveryStatus(StrEnum):
    DELIVERED = "delivered"
    FAILED = "failed"
    QUEUED = "queued"
    SENDING = "sending"

    def __str__(self) -> str:
        return str(self.value)
