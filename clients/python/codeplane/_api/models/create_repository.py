from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateRepository")


@_attrs_define
class CreateRepository:
    """
    Attributes:
        url (str): Clone URL (https://, or ssh:// where a credential exists).
        name (str | Unset): Defaults to the last segment of the URL.
        default_branch (str | Unset): Defaults to the remote's HEAD.
    """

    url: str
    name: str | Unset = UNSET
    default_branch: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        name = self.name

        default_branch = self.default_branch

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if default_branch is not UNSET:
            field_dict["default_branch"] = default_branch

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url")

        name = d.pop("name", UNSET)

        default_branch = d.pop("default_branch", UNSET)

        create_repository = cls(
            url=url,
            name=name,
            default_branch=default_branch,
        )

        return create_repository
