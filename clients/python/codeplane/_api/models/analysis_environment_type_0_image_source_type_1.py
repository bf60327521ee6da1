from enum import StrEnum


class AnalysisEnvironmentType0ImageSourceType1(StrEnum):
    CATALOG = "catalog"
    REPOSITORY = "repository"

    def __str__(self) -> str:
        return str(self.value)
