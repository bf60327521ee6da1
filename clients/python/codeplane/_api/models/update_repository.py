from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="UpdateRepository")


@_attrs_define
class UpdateRepository:
    """
    Attributes:
        name (str | Unset):
        default_branch (str | Unset):
        auto_analyze (bool | Unset):
        report_check_runs (bool | Unset): Report each run created from now on as a check run on its commit (repositories
            connected through a GitHub App installation only; 409 otherwise).
    """

    name: str | Unset = UNSET
    default_branch: str | Unset = UNSET
    auto_analyze: bool | Unset = UNSET
    report_check_runs: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        default_branch = self.default_branch

        auto_analyze = self.auto_analyze

        report_check_runs = self.report_check_runs

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if default_branch is not UNSET:
            field_dict["default_branch"] = default_branch
        if auto_analyze is not UNSET:
            field_dict["auto_analyze"] = auto_analyze
        if report_check_runs is not UNSET:
            field_dict["report_check_runs"] = report_check_runs

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        default_branch = d.pop("default_branch", UNSET)

        auto_analyze = d.pop("auto_analyze", UNSET)

        report_check_runs = d.pop("report_check_runs", UNSET)

        update_repository = cls(
            name=name,
            default_branch=default_branch,
            auto_analyze=auto_analyze,
            report_check_runs=report_check_runs,
        )

        return update_repository
