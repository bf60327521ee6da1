from enum import StrEnum


class AnalysisLanguage(StrEnum):
    EN = "en"
    JA = "ja"

    def __str__(self) -> str:
        return str(self.value)
