from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.integration_provider import IntegrationProvider

T = TypeVar("T", bound="Integration")


@_attrs_define
class Integration:
    """
    Attributes:
        id (UUID):
        provider (IntegrationProvider):
        installation_id (int): GitHub's id of the App installation.
        account_login (str): The GitHub user or organization the App is installed on.
        account_type (str): `User`, `Organization` or `Enterprise`.
        repository_selection (str): `all` or `selected`: which of the account's repositories the installation can see.
        suspended (bool): Suspended on GitHub: its repositories are not fetched until it is unsuspended.
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    provider: IntegrationProvider
    installation_id: int
    account_login: str
    account_type: str
    repository_selection: str
    suspended: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        provider = self.provider.value

        installation_id = self.installation_id

        account_login = self.account_login

        account_type = self.account_type

        repository_selection = self.repository_selection

        suspended = self.suspended

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "provider": provider,
                "installation_id": installation_id,
                "account_login": account_login,
                "account_type": account_type,
                "repository_selection": repository_selection,
                "suspended": suspended,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        provider = IntegrationProvider(d.pop("provider"))

        installation_id = d.pop("installation_id")

        account_login = d.pop("account_login")

        account_type = d.pop("account_type")

        repository_selection = d.pop("repository_selection")

        suspended = d.pop("suspended")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        integration = cls(
            id=id,
            provider=provider,
            installation_id=installation_id,
            account_login=account_login,
            account_type=account_type,
            repository_selection=repository_selection,
            suspended=suspended,
            created_at=created_at,
            updated_at=updated_at,
        )

        integration.additional_properties = d
        return integration

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
