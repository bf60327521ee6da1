from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RegisterInstallationRepository")


@_attrs_define
class RegisterInstallationRepository:
    """
    Attributes:
        full_name (str): The repository as GitHub names it: owner/name.
        auto_analyze (bool | Unset): Analyse pushes and pull requests from webhooks (default false).
    """

    full_name: str
    auto_analyze: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        full_name = self.full_name

        auto_analyze = self.auto_analyze

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "full_name": full_name,
            }
        )
        if auto_analyze is not UNSET:
            field_dict["auto_analyze"] = auto_analyze

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        full_name = d.pop("full_name")

        auto_analyze = d.pop("auto_analyze", UNSET)

        register_installation_repository = cls(
            full_name=full_name,
            auto_analyze=auto_analyze,
        )

        return register_installation_repository
