from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.run_run_config_parameters import RunRunConfigParameters


T = TypeVar("T", bound="RunRunConfig")


@_attrs_define
class RunRunConfig:
    """
    Attributes:
        command (list[str]):
        parameters (RunRunConfigParameters):
        timeout_seconds (int): Each attempt's time budget.
        retries (int): Attempts an infrastructure failure may add (the creation's `retries`).
    """

    command: list[str]
    parameters: RunRunConfigParameters
    timeout_seconds: int
    retries: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        parameters = self.parameters.to_dict()

        timeout_seconds = self.timeout_seconds

        retries = self.retries

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "command": command,
                "parameters": parameters,
                "timeout_seconds": timeout_seconds,
                "retries": retries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_run_config_parameters import RunRunConfigParameters

        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        parameters = RunRunConfigParameters.from_dict(d.pop("parameters"))

        timeout_seconds = d.pop("timeout_seconds")

        retries = d.pop("retries")

        run_run_config = cls(
            command=command,
            parameters=parameters,
            timeout_seconds=timeout_seconds,
            retries=retries,
        )

        run_run_config.additional_properties = d
        return run_run_config

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
