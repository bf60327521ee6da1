from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.repository_file_encoding import RepositoryFileEncoding

T = TypeVar("T", bound="RepositoryFile")


@_attrs_define
class RepositoryFile:
    """
    Attributes:
        commit_hash (str):
        path (str):
        size (int): Full size in bytes, even when truncated.
        encoding (RepositoryFileEncoding):
        content (str):
        truncated (bool):
    """

    commit_hash: str
    path: str
    size: int
    encoding: RepositoryFileEncoding
    content: str
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        commit_hash = self.commit_hash

        path = self.path

        size = self.size

        encoding = self.encoding.value

        content = self.content

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "commit_hash": commit_hash,
                "path": path,
                "size": size,
                "encoding": encoding,
                "content": content,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        commit_hash = d.pop("commit_hash")

        path = d.pop("path")

        size = d.pop("size")

        encoding = RepositoryFileEncoding(d.pop("encoding"))

        content = d.pop("content")

        truncated = d.pop("truncated")

        repository_file = cls(
            commit_hash=commit_hash,
            path=path,
            size=size,
            encoding=encoding,
            content=content,
            truncated=truncated,
        )

        repository_file.additional_properties = d
        return repository_file

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
