from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConnectGitHubInstallation")


@_attrs_define
class ConnectGitHubInstallation:
    """
    Attributes:
        installation_id (int): GitHub's id of the App installation.
    """

    installation_id: int

    def to_dict(self) -> dict[str, Any]:
        installation_id = self.installation_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "installation_id": installation_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        installation_id = d.pop("installation_id")

        connect_git_hub_installation = cls(
            installation_id=installation_id,
        )

        return connect_git_hub_installation
