from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.o_auth_client_grant_types_item import OAuthClientGrantTypesItem
from ..models.o_auth_client_token_endpoint_auth_method import (
    OAuthClientTokenEndpointAuthMethod,
)

T = TypeVar("T", bound="OAuthClient")


@_attrs_define
class OAuthClient:
    """A client registered with an API key of this account (POST /oauth/register with `Authorization: Bearer <API key>`).

    Attributes:
        client_id (str):
        client_name (str):
        redirect_uris (list[str]):
        grant_types (list[OAuthClientGrantTypesItem]):
        token_endpoint_auth_method (OAuthClientTokenEndpointAuthMethod):
        scope (None | str): The scopes the client may ask for (space-separated); null: any.
        created_at (datetime.datetime):
    """

    client_id: str
    client_name: str
    redirect_uris: list[str]
    grant_types: list[OAuthClientGrantTypesItem]
    token_endpoint_auth_method: OAuthClientTokenEndpointAuthMethod
    scope: None | str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_name = self.client_name

        redirect_uris = self.redirect_uris

        grant_types = []
        for grant_types_item_data in self.grant_types:
            grant_types_item = grant_types_item_data.value
            grant_types.append(grant_types_item)

        token_endpoint_auth_method = self.token_endpoint_auth_method.value

        scope: None | str
        scope = self.scope

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "client_id": client_id,
                "client_name": client_name,
                "redirect_uris": redirect_uris,
                "grant_types": grant_types,
                "token_endpoint_auth_method": token_endpoint_auth_method,
                "scope": scope,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        client_name = d.pop("client_name")

        redirect_uris = cast(list[str], d.pop("redirect_uris"))

        grant_types = []
        _grant_types = d.pop("grant_types")
        for grant_types_item_data in _grant_types:
            grant_types_item = OAuthClientGrantTypesItem(grant_types_item_data)

            grant_types.append(grant_types_item)

        token_endpoint_auth_method = OAuthClientTokenEndpointAuthMethod(
            d.pop("token_endpoint_auth_method")
        )

        def _parse_scope(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        scope = _parse_scope(d.pop("scope"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        o_auth_client = cls(
            client_id=client_id,
            client_name=client_name,
            redirect_uris=redirect_uris,
            grant_types=grant_types,
            token_endpoint_auth_method=token_endpoint_auth_method,
            scope=scope,
            created_at=created_at,
        )

        o_auth_client.additional_properties = d
        return o_auth_client

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
