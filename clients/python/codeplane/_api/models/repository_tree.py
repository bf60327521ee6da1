from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.repository_tree_entries_item import RepositoryTreeEntriesItem


T = TypeVar("T", bound="RepositoryTree")


@_attrs_define
class RepositoryTree:
    """
    Attributes:
        commit_hash (str):
        path (str):
        entries (list[RepositoryTreeEntriesItem]):
        next_cursor (None | str): Pass as ?cursor= (with the same `path`) for the rest of the directory, read at the
            same commit; null on the last page.
    """

    commit_hash: str
    path: str
    entries: list[RepositoryTreeEntriesItem]
    next_cursor: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        commit_hash = self.commit_hash

        path = self.path

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        next_cursor: None | str
        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "commit_hash": commit_hash,
                "path": path,
                "entries": entries,
                "next_cursor": next_cursor,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.repository_tree_entries_item import RepositoryTreeEntriesItem

        d = dict(src_dict)
        commit_hash = d.pop("commit_hash")

        path = d.pop("path")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = RepositoryTreeEntriesItem.from_dict(entries_item_data)

            entries.append(entries_item)

        def _parse_next_cursor(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor"))

        repository_tree = cls(
            commit_hash=commit_hash,
            path=path,
            entries=entries,
            next_cursor=next_cursor,
        )

        repository_tree.additional_properties = d
        return repository_tree

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
