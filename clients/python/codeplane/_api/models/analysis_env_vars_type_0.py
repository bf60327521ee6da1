from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisEnvVarsType0")


@_attrs_define
class AnalysisEnvVarsType0:
    """null until the analysis has completed.

    Attributes:
        valid (bool): True when no experiment's required variable is missing.
        required_env_vars (list[str]): The union of the experiments' `required_env_vars`: variables some entry point
            cannot start without (its code, or a config file it uses, reads them with no fallback). A run is refused only
            for its own experiment's.
        missing_env_vars (list[str]): Required variables that are not configured for this account or repository,
            computed when the analysis is read.
    """

    valid: bool
    required_env_vars: list[str]
    missing_env_vars: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        valid = self.valid

        required_env_vars = self.required_env_vars

        missing_env_vars = self.missing_env_vars

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "valid": valid,
                "required_env_vars": required_env_vars,
                "missing_env_vars": missing_env_vars,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        valid = d.pop("valid")

        required_env_vars = cast(list[str], d.pop("required_env_vars"))

        missing_env_vars = cast(list[str], d.pop("missing_env_vars"))

        analysis_env_vars_type_0 = cls(
            valid=valid,
            required_env_vars=required_env_vars,
            missing_env_vars=missing_env_vars,
        )

        analysis_env_vars_type_0.additional_properties = d
        return analysis_env_vars_type_0

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
