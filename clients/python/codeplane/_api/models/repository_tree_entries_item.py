from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.repository_tree_entries_item_type import RepositoryTreeEntriesItemType

T = TypeVar("T", bound="RepositoryTreeEntriesItem")


@_attrs_define
class RepositoryTreeEntriesItem:
    """
    Attributes:
        name (str):
        path (str):
        type_ (RepositoryTreeEntriesItemType):
        size (int | None):
    """

    name: str
    path: str
    type_: RepositoryTreeEntriesItemType
    size: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        type_ = self.type_.value

        size: int | None
        size = self.size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "path": path,
                "type": type_,
                "size": size,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        path = d.pop("path")

        type_ = RepositoryTreeEntriesItemType(d.pop("type"))

        def _parse_size(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        size = _parse_size(d.pop("size"))

        repository_tree_entries_item = cls(
            name=name,
            path=path,
            type_=type_,
            size=size,
        )

        repository_tree_entries_item.additional_properties = d
        return repository_tree_entries_item

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
