from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_event_type_4_event import RunLogEventType4Event

T = TypeVar("T", bound="RunLogEventType4")


@_attrs_define
class RunLogEventType4:
    """Every line has been sent and the run is over; the server then closes the stream.

    Attributes:
        event (RunLogEventType4Event):
        data (str): JSON text; its decoded shape is `contentSchema`.
    """

    event: RunLogEventType4Event
    data: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event = self.event.value

        data = self.data

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event": event,
                "data": data,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event = RunLogEventType4Event(d.pop("event"))

        data = d.pop("data")

        run_log_event_type_4 = cls(
            event=event,
            data=data,
        )

        run_log_event_type_4.additional_properties = d
        return run_log_event_type_4

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
