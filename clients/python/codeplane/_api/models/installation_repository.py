from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="InstallationRepository")


@_attrs_define
class InstallationRepository:
    """
    Attributes:
        github_id (int): GitHub's id of the repository.
        full_name (str): owner/name
        name (str):
        owner (str):
        private (bool):
        default_branch (None | str):
        html_url (str):
        repository_id (None | UUID): The codeplane repository registered from it through this integration, if any.
    """

    github_id: int
    full_name: str
    name: str
    owner: str
    private: bool
    default_branch: None | str
    html_url: str
    repository_id: None | UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        github_id = self.github_id

        full_name = self.full_name

        name = self.name

        owner = self.owner

        private = self.private

        default_branch: None | str
        default_branch = self.default_branch

        html_url = self.html_url

        repository_id: None | str
        if isinstance(self.repository_id, UUID):
            repository_id = str(self.repository_id)
        else:
            repository_id = self.repository_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "github_id": github_id,
                "full_name": full_name,
                "name": name,
                "owner": owner,
                "private": private,
                "default_branch": default_branch,
                "html_url": html_url,
                "repository_id": repository_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        github_id = d.pop("github_id")

        full_name = d.pop("full_name")

        name = d.pop("name")

        owner = d.pop("owner")

        private = d.pop("private")

        def _parse_default_branch(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        default_branch = _parse_default_branch(d.pop("default_branch"))

        html_url = d.pop("html_url")

        def _parse_repository_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                repository_id_type_0 = UUID(data)

                return repository_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        repository_id = _parse_repository_id(d.pop("repository_id"))

        installation_repository = cls(
            github_id=github_id,
            full_name=full_name,
            name=name,
            owner=owner,
            private=private,
            default_branch=default_branch,
            html_url=html_url,
            repository_id=repository_id,
        )

        installation_repository.additional_properties = d
        return installation_repository

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
