from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.repository_refs_branches_item import RepositoryRefsBranchesItem
    from ..models.repository_refs_tags_item import RepositoryRefsTagsItem


T = TypeVar("T", bound="RepositoryRefs")


@_attrs_define
class RepositoryRefs:
    """
    Attributes:
        head (None | str):
        branches (list[RepositoryRefsBranchesItem]):
        tags (list[RepositoryRefsTagsItem]):
    """

    head: None | str
    branches: list[RepositoryRefsBranchesItem]
    tags: list[RepositoryRefsTagsItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        head: None | str
        head = self.head

        branches = []
        for branches_item_data in self.branches:
            branches_item = branches_item_data.to_dict()
            branches.append(branches_item)

        tags = []
        for tags_item_data in self.tags:
            tags_item = tags_item_data.to_dict()
            tags.append(tags_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "head": head,
                "branches": branches,
                "tags": tags,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.repository_refs_branches_item import RepositoryRefsBranchesItem
        from ..models.repository_refs_tags_item import RepositoryRefsTagsItem

        d = dict(src_dict)

        def _parse_head(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        head = _parse_head(d.pop("head"))

        branches = []
        _branches = d.pop("branches")
        for branches_item_data in _branches:
            branches_item = RepositoryRefsBranchesItem.from_dict(branches_item_data)

            branches.append(branches_item)

        tags = []
        _tags = d.pop("tags")
        for tags_item_data in _tags:
            tags_item = RepositoryRefsTagsItem.from_dict(tags_item_data)

            tags.append(tags_item)

        repository_refs = cls(
            head=head,
            branches=branches,
            tags=tags,
        )

        repository_refs.additional_properties = d
        return repository_refs

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
