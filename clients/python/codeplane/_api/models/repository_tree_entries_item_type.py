from enum import StrEnum


class RepositoryTreeEntriesItemType(StrEnum):
    DIR = "dir"
    FILE = "file"
    SUBMODULE = "submodule"
    SYMLINK = "symlink"

    def __str__(self) -> str:
        return str(self.value)
