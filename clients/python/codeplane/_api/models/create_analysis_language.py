from enum import StrEnum


class CreateAnalysisLanguage(StrEnum):
    EN = "en"
    JA = "ja"

    def __str__(self) -> str:
        return str(self.value)
