from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_event_type_1_event import RunLogEventType1Event

T = TypeVar("T", bound="RunLogEventType1")


@_attrs_define
class RunLogEventType1:
    """A line of the install of the environment the run waits for (its dependencies, built once per environment key), in
    order, while the run waits for that build: after the `preprocessing` status, before the `running` status and the
    first stdout/stderr line. None for a cache hit, a run without an environment, or a client that connects once the
    command has started. A client that comes after the build has ended (before the command started) is sent the lines it
    lacks from the stored log (`GET /v1/runs/{run_id}/logs/setup`, its last 256 KiB), numbered by their place in it,
    with the build's end as `ts`.

        Attributes:
            event (RunLogEventType1Event):
            id (str): `<seq of the last line before it>:preprocessing/<n>`; send it back as `Last-Event-ID` to resume.
            data (str): JSON text; its decoded shape is `contentSchema`.
    """

    event: RunLogEventType1Event
    id: str
    data: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event = self.event.value

        id = self.id

        data = self.data

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event": event,
                "id": id,
                "data": data,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event = RunLogEventType1Event(d.pop("event"))

        id = d.pop("id")

        data = d.pop("data")

        run_log_event_type_1 = cls(
            event=event,
            id=id,
            data=data,
        )

        run_log_event_type_1.additional_properties = d
        return run_log_event_type_1

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
