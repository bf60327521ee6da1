from enum import StrEnum


class AnalysisRepoSummaryType0Language(StrEnum):
    EN = "en"
    JA = "ja"

    def __str__(self) -> str:
        return str(self.value)
