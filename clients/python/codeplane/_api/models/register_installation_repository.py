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
        report_check_runs (bool | Unset): Report each run of the repository as a check run on its commit (default false;
            docs/users/github.md).
    """

    full_name: str
    auto_analyze: bool | Unset = UNSET
    report_check_runs: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        full_name = self.full_name

        auto_analyze = self.auto_analyze

        report_check_runs = self.report_check_runs

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "full_name": full_name,
            }
        )
        if auto_analyze is not UNSET:
            field_dict["auto_analyze"] = auto_analyze
        if report_check_runs is not UNSET:
            field_dict["report_check_runs"] = report_check_runs

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        full_name = d.pop("full_name")

        auto_analyze = d.pop("auto_analyze", UNSET)

        report_check_runs = d.pop("report_check_runs", UNSET)

        register_installation_repository = cls(
            full_name=full_name,
            auto_analyze=auto_analyze,
            report_check_runs=report_check_runs,
        )

        return register_installation_repository
