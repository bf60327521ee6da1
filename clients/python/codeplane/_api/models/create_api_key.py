from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.create_api_key_scopes_item import CreateApiKeyScopesItem
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateApiKey")


@_attrs_define
class CreateApiKey:
    """
    Attributes:
        name (str):
        scopes (list[CreateApiKeyScopesItem] | Unset): Omit for a key with every scope the caller has.
        expires_at (datetime.datetime | Unset): RFC 3339; must be in the future.
    """

    name: str
    scopes: list[CreateApiKeyScopesItem] | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = []
            for scopes_item_data in self.scopes:
                scopes_item = scopes_item_data.value
                scopes.append(scopes_item)

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        _scopes = d.pop("scopes", UNSET)
        scopes: list[CreateApiKeyScopesItem] | Unset = UNSET
        if _scopes is not UNSET:
            scopes = []
            for scopes_item_data in _scopes:
                scopes_item = CreateApiKeyScopesItem(scopes_item_data)

                scopes.append(scopes_item)

        _expires_at = d.pop("expires_at", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)

        create_api_key = cls(
            name=name,
            scopes=scopes,
            expires_at=expires_at,
        )

        return create_api_key
