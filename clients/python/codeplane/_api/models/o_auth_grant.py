from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.o_auth_grant_scopes_item import OAuthGrantScopesItem

T = TypeVar("T", bound="OAuthGrant")


@_attrs_define
class OAuthGrant:
    """Remembered consent: what a person of this account allowed a client. Its tokens work while it does.

    Attributes:
        id (UUID):
        client_id (str): A registered client's id, or the URL of its client ID metadata document.
        client_name (str):
        scopes (list[OAuthGrantScopesItem]):
        api_key_id (UUID): The API key the person signed in with; revoking it ends this grant and its tokens.
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    client_id: str
    client_name: str
    scopes: list[OAuthGrantScopesItem]
    api_key_id: UUID
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        client_id = self.client_id

        client_name = self.client_name

        scopes = []
        for scopes_item_data in self.scopes:
            scopes_item = scopes_item_data.value
            scopes.append(scopes_item)

        api_key_id = str(self.api_key_id)

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "client_id": client_id,
                "client_name": client_name,
                "scopes": scopes,
                "api_key_id": api_key_id,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        client_id = d.pop("client_id")

        client_name = d.pop("client_name")

        scopes = []
        _scopes = d.pop("scopes")
        for scopes_item_data in _scopes:
            scopes_item = OAuthGrantScopesItem(scopes_item_data)

            scopes.append(scopes_item)

        api_key_id = UUID(d.pop("api_key_id"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        o_auth_grant = cls(
            id=id,
            client_id=client_id,
            client_name=client_name,
            scopes=scopes,
            api_key_id=api_key_id,
            created_at=created_at,
            updated_at=updated_at,
        )

        o_auth_grant.additional_properties = d
        return o_auth_grant

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
