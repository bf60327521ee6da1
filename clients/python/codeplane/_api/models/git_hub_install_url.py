from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="GitHubInstallUrl")


@_attrs_define
class GitHubInstallUrl:
    """
    Attributes:
        install_url (str): Where a person installs the GitHub App; its `state` is bound to this account and expires with
            `expires_at`.
        expires_at (datetime.datetime): When the `state` in the URL stops being accepted by the callback (one hour).
    """

    install_url: str
    expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        install_url = self.install_url

        expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "install_url": install_url,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        install_url = d.pop("install_url")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        git_hub_install_url = cls(
            install_url=install_url,
            expires_at=expires_at,
        )

        git_hub_install_url.additional_properties = d
        return git_hub_install_url

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
