from enum import StrEnum


class RunLogPageStreamType2Type1(StrEnum):
    STDERR = "stderr"
    STDOUT = "stdout"

    def __str__(self) -> str:
        return str(self.value)
