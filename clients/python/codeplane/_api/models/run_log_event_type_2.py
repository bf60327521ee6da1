from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_event_type_2_event import RunLogEventType2Event

T = TypeVar("T", bound="RunLogEventType2")


@_attrs_define
class RunLogEventType2:
    """The run's whole `timeline`, exactly as `GET /v1/runs/{run_id}` shows it: once on connect (after the status events
    replayed then) and again each time it gains an event. A full snapshot that replaces the previous one, so it has no
    `id`: a client that reconnects is sent the current one. It may come at any point before `end`, never after it, and
    is not ordered with the `status` events and lines (it is read from the run's row about once a second, which may be
    ahead of them or behind); the last one read, with `ended` once the run's row has its end, comes before the terminal
    status and `end`.

        Attributes:
            event (RunLogEventType2Event):
            data (str): JSON text; its decoded shape is `contentSchema`.
    """

    event: RunLogEventType2Event
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
        event = RunLogEventType2Event(d.pop("event"))

        data = d.pop("data")

        run_log_event_type_2 = cls(
            event=event,
            data=data,
        )

        run_log_event_type_2.additional_properties = d
        return run_log_event_type_2

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
