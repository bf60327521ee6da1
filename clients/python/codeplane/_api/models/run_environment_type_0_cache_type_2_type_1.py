from enum import StrEnum


class RunEnvironmentType0CacheType2Type1(StrEnum):
    BUILT = "built"
    HIT = "hit"

    def __str__(self) -> str:
        return str(self.value)
