from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.rerun_parameters import RerunParameters


T = TypeVar("T", bound="Rerun")


@_attrs_define
class Rerun:
    """
    Attributes:
        parameters (RerunParameters | Unset): Overrides merged over the original run's parameter values (experiment runs
            only).
        compute_type (str | Unset): Default: the original run's compute type.
        timeout_seconds (int | Unset): Default: the original run's timeout.
        retries (int | Unset): Default: the original run's retries.
    """

    parameters: RerunParameters | Unset = UNSET
    compute_type: str | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    retries: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        compute_type = self.compute_type

        timeout_seconds = self.timeout_seconds

        retries = self.retries

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if compute_type is not UNSET:
            field_dict["compute_type"] = compute_type
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
        if retries is not UNSET:
            field_dict["retries"] = retries

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.rerun_parameters import RerunParameters

        d = dict(src_dict)
        _parameters = d.pop("parameters", UNSET)
        parameters: RerunParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = RerunParameters.from_dict(_parameters)

        compute_type = d.pop("compute_type", UNSET)

        timeout_seconds = d.pop("timeout_seconds", UNSET)

        retries = d.pop("retries", UNSET)

        rerun = cls(
            parameters=parameters,
            compute_type=compute_type,
            timeout_seconds=timeout_seconds,
            retries=retries,
        )

        return rerun
