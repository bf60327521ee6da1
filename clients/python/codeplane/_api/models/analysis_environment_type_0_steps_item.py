from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisEnvironmentType0StepsItem")


@_attrs_define
class AnalysisEnvironmentType0StepsItem:
    """
    Attributes:
        name (str):
        run (str): POSIX sh, run in the checkout with the environment's PATH.
        why (str):
        ecosystem (str):
    """

    name: str
    run: str
    why: str
    ecosystem: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        run = self.run

        why = self.why

        ecosystem = self.ecosystem

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "run": run,
                "why": why,
                "ecosystem": ecosystem,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        run = d.pop("run")

        why = d.pop("why")

        ecosystem = d.pop("ecosystem")

        analysis_environment_type_0_steps_item = cls(
            name=name,
            run=run,
            why=why,
            ecosystem=ecosystem,
        )

        analysis_environment_type_0_steps_item.additional_properties = d
        return analysis_environment_type_0_steps_item

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
