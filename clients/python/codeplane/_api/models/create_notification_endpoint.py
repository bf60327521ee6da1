from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.create_notification_endpoint_events_item import (
    CreateNotificationEndpointEventsItem,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateNotificationEndpoint")


@_attrs_define
class CreateNotificationEndpoint:
    """
    Attributes:
        url (str): Where deliveries are POSTed: an https:// URL whose host resolves only to public addresses (the clone
            URL policy; checked again at every delivery).
        events (list[CreateNotificationEndpointEventsItem]): The events sent to this endpoint.
        enabled (bool | Unset): Defaults to true. Default: True.
    """

    url: str
    events: list[CreateNotificationEndpointEventsItem]
    enabled: bool | Unset = True

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        enabled = self.enabled

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "events": events,
            }
        )
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = CreateNotificationEndpointEventsItem(events_item_data)

            events.append(events_item)

        enabled = d.pop("enabled", UNSET)

        create_notification_endpoint = cls(
            url=url,
            events=events,
            enabled=enabled,
        )

        return create_notification_endpoint
