from enum import StrEnum


class AnalysisExperimentsItemKind(StrEnum):
    GO_MAIN = "go-main"
    MAKE_TARGET = "make-target"
    NODE_BIN = "node-bin"
    NOTEBOOK = "notebook"
    NPM_SCRIPT = "npm-script"
    PYTHON_MODULE = "python-module"
    PYTHON_SCRIPT = "python-script"
    SHELL_SCRIPT = "shell-script"

    def __str__(self) -> str:
        return str(self.value)
