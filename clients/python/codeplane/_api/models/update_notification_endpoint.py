from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.update_notification_endpoint_events_item import (
    UpdateNotificationEndpointEventsItem,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="UpdateNotificationEndpoint")


@_attrs_define
class UpdateNotificationEndpoint:
    """
    Attributes:
        url (str | Unset): Where deliveries are POSTed: an https:// URL whose host resolves only to public addresses
            (the clone URL policy; checked again at every delivery).
        events (list[UpdateNotificationEndpointEventsItem] | Unset): The events sent to this endpoint.
        enabled (bool | Unset):
    """

    url: str | Unset = UNSET
    events: list[UpdateNotificationEndpointEventsItem] | Unset = UNSET
    enabled: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events: list[str] | Unset = UNSET
        if not isinstance(self.events, Unset):
            events = []
            for events_item_data in self.events:
                events_item = events_item_data.value
                events.append(events_item)

        enabled = self.enabled

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if url is not UNSET:
            field_dict["url"] = url
        if events is not UNSET:
            field_dict["events"] = events
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url", UNSET)

        _events = d.pop("events", UNSET)
        events: list[UpdateNotificationEndpointEventsItem] | Unset = UNSET
        if _events is not UNSET:
            events = []
            for events_item_data in _events:
                events_item = UpdateNotificationEndpointEventsItem(events_item_data)

                events.append(events_item)

        enabled = d.pop("enabled", UNSET)

        update_notification_endpoint = cls(
            url=url,
            events=events,
            enabled=enabled,
        )

        return update_notification_endpoint
