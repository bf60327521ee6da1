from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_feed_event_type_1_event import RunFeedEventType1Event
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunFeedEventType1")


@_attrs_define
class RunFeedEventType1:
    """A run's new state, exactly as `GET /v1/runs/{run_id}` shows it: sent when its status, phase, timeline, exit code,
    error, queue reason, environment, attempts or final metrics change (a queue position moving as others are admitted
    is not a change of the run). Apply by `run_id`: the same state may come again after a resume. Only the last event of
    what one read of the feed found has an `id`.

        Attributes:
            event (RunFeedEventType1Event):
            data (str): JSON text; its decoded shape is `contentSchema`.
            id (str | Unset): A position in the feed; send it back as `Last-Event-ID` to resume.
    """

    event: RunFeedEventType1Event
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
        event = RunFeedEventType1Event(d.pop("event"))

        data = d.pop("data")

        id = d.pop("id", UNSET)

        run_feed_event_type_1 = cls(
            event=event,
            data=data,
            id=id,
        )

        run_feed_event_type_1.additional_properties = d
        return run_feed_event_type_1

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
