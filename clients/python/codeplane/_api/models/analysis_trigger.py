from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_trigger_kind import AnalysisTriggerKind

T = TypeVar("T", bound="AnalysisTrigger")


@_attrs_define
class AnalysisTrigger:
    """What started the analysis. A commit is analysed once: a later trigger of the same commit finds this analysis and
    does not change it.

        Attributes:
            kind (AnalysisTriggerKind): api: started through the API (or the dashboard); push / pull_request: by a GitHub
                webhook.
            delivery_id (None | str): The webhook delivery (X-GitHub-Delivery) that started it; see GET
                /v1/webhooks/github/deliveries.
    """

    kind: AnalysisTriggerKind
    delivery_id: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        delivery_id: None | str
        delivery_id = self.delivery_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "delivery_id": delivery_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = AnalysisTriggerKind(d.pop("kind"))

        def _parse_delivery_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        delivery_id = _parse_delivery_id(d.pop("delivery_id"))

        analysis_trigger = cls(
            kind=kind,
            delivery_id=delivery_id,
        )

        analysis_trigger.additional_properties = d
        return analysis_trigger

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
