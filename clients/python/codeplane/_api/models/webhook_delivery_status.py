from enum import StrEnum


class WebhookDeliveryStatus(StrEnum):
    FAILED = "failed"
    HANDLED = "handled"
    PROCESSING = "processing"
    QUEUED = "queued"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return str(self.value)
