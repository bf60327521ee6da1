from enum import StrEnum


class AnalysisExperimentsItemParametersItemCategory(StrEnum):
    BOOLEAN = "boolean"
    FLAG = "flag"
    INTEGER = "integer"
    NUMBER = "number"
    PATH = "path"
    STRING = "string"

    def __str__(self) -> str:
        return str(self.value)
