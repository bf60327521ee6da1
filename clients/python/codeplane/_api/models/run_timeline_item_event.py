from enum import StrEnum


class RunTimelineItemEvent(StrEnum):
    ADMITTED = "admitted"
    CHECKED_OUT = "checked_out"
    CREATED = "created"
    ENDED = "ended"
    ENVIRONMENT_READY = "environment_ready"
    FIRST_OUTPUT = "first_output"
    IMAGE_READY = "image_ready"
    SCHEDULED = "scheduled"
    STARTED = "started"

    def __str__(self) -> str:
        return str(self.value)
