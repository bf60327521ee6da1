from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.repository_provider import RepositoryProvider

T = TypeVar("T", bound="Repository")


@_attrs_define
class Repository:
    """
    Attributes:
        id (UUID):
        name (str):
        url (str):
        provider (RepositoryProvider):
        default_branch (None | str):
        integration_id (None | UUID):
        auto_analyze (bool):
        report_check_runs (bool): Each run of the repository reports a check run on its commit on GitHub
            (docs/users/github.md).
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    name: str
    url: str
    provider: RepositoryProvider
    default_branch: None | str
    integration_id: None | UUID
    auto_analyze: bool
    report_check_runs: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        url = self.url

        provider = self.provider.value

        default_branch: None | str
        default_branch = self.default_branch

        integration_id: None | str
        if isinstance(self.integration_id, UUID):
            integration_id = str(self.integration_id)
        else:
            integration_id = self.integration_id

        auto_analyze = self.auto_analyze

        report_check_runs = self.report_check_runs

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "url": url,
                "provider": provider,
                "default_branch": default_branch,
                "integration_id": integration_id,
                "auto_analyze": auto_analyze,
                "report_check_runs": report_check_runs,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        url = d.pop("url")

        provider = RepositoryProvider(d.pop("provider"))

        def _parse_default_branch(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        default_branch = _parse_default_branch(d.pop("default_branch"))

        def _parse_integration_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                integration_id_type_0 = UUID(data)

                return integration_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        integration_id = _parse_integration_id(d.pop("integration_id"))

        auto_analyze = d.pop("auto_analyze")

        report_check_runs = d.pop("report_check_runs")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        repository = cls(
            id=id,
            name=name,
            url=url,
            provider=provider,
            default_branch=default_branch,
            integration_id=integration_id,
            auto_analyze=auto_analyze,
            report_check_runs=report_check_runs,
            created_at=created_at,
            updated_at=updated_at,
        )

        repository.additional_properties = d
        return repository

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
