from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_feed_event_type_2_event import RunFeedEventType2Event
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunFeedEventType2")


@_attrs_define
class RunFeedEventType2:
    """The run was deleted. Only the last event of what one read of the feed found has an `id`.

    Attributes:
        event (RunFeedEventType2Event):
        data (str): JSON text; its decoded shape is `contentSchema`.
        id (str | Unset): A position in the feed; send it back as `Last-Event-ID` to resume.
    """

    event: RunFeedEventType2Event
    data: str
    id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event = self.event.value

        data = self.data

        id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event": event,
                "data": data,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event = RunFeedEventType2Event(d.pop("event"))

        data = d.pop("data")

        id = d.pop("id", UNSET)

        run_feed_event_type_2 = cls(
            event=event,
            data=data,
            id=id,
        )

        run_feed_event_type_2.additional_properties = d
        return run_feed_event_type_2

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
