from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.webhook_delivery_status import WebhookDeliveryStatus

T = TypeVar("T", bound="WebhookDelivery")


@_attrs_define
class WebhookDelivery:
    """
    Attributes:
        id (str): GitHub's delivery id (X-GitHub-Delivery): the same in the App's Advanced settings, where it can be
            redelivered.
        event (str):
        action (None | str):
        installation_id (int | None):
        repository (None | str): owner/name, when the delivery is about a repository.
        status (WebhookDeliveryStatus): queued: accepted, waiting (or waiting to be tried again: see error); processing:
            being handled; handled: done; skipped: nothing to do, with the reason in error; failed: handling failed after
            its attempts (a redelivery from GitHub tries again).
        error (None | str): Why it was skipped, or why handling failed (the last attempt).
        attempts (int):
        received_at (datetime.datetime):
        finished_at (datetime.datetime | None):
    """

    id: str
    event: str
    action: None | str
    installation_id: int | None
    repository: None | str
    status: WebhookDeliveryStatus
    error: None | str
    attempts: int
    received_at: datetime.datetime
    finished_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        event = self.event

        action: None | str
        action = self.action

        installation_id: int | None
        installation_id = self.installation_id

        repository: None | str
        repository = self.repository

        status = self.status.value

        error: None | str
        error = self.error

        attempts = self.attempts

        received_at = self.received_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "event": event,
                "action": action,
                "installation_id": installation_id,
                "repository": repository,
                "status": status,
                "error": error,
                "attempts": attempts,
                "received_at": received_at,
                "finished_at": finished_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        event = d.pop("event")

        def _parse_action(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        action = _parse_action(d.pop("action"))

        def _parse_installation_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        installation_id = _parse_installation_id(d.pop("installation_id"))

        def _parse_repository(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        repository = _parse_repository(d.pop("repository"))

        status = WebhookDeliveryStatus(d.pop("status"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        attempts = d.pop("attempts")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        webhook_delivery = cls(
            id=id,
            event=event,
            action=action,
            installation_id=installation_id,
            repository=repository,
            status=status,
            error=error,
            attempts=attempts,
            received_at=received_at,
            finished_at=finished_at,
        )

        webhook_delivery.additional_properties = d
        return webhook_delivery

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
