from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_feed_event_type_0_event import RunFeedEventType0Event

T = TypeVar("T", bound="RunFeedEventType0")


@_attrs_define
class RunFeedEventType0:
    """The stream is live from here: on connect, after the changes since the resume point (if any). A client that starts
    without one reads its list after this event, so no change falls between the two.

        Attributes:
            event (RunFeedEventType0Event):
            id (str): A position in the feed; send it back as `Last-Event-ID` to resume.
            data (str): JSON text; its decoded shape is `contentSchema`.
    """

    event: RunFeedEventType0Event
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
        event = RunFeedEventType0Event(d.pop("event"))

        id = d.pop("id")

        data = d.pop("data")

        run_feed_event_type_0 = cls(
            event=event,
            id=id,
            data=data,
        )

        run_feed_event_type_0.additional_properties = d
        return run_feed_event_type_0

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
