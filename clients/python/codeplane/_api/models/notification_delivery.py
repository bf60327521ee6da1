from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.notification_delivery_event import NotificationDeliveryEvent
from ..models.notification_delivery_status import NotificationDeliveryStatus

if TYPE_CHECKING:
    from ..models.notification_delivery_subject import NotificationDeliverySubject


T = TypeVar("T", bound="NotificationDelivery")


@_attrs_define
class NotificationDelivery:
    """
    Attributes:
        id (UUID): Also the `webhook-id` header: the same on every attempt and redelivery, so receivers deduplicate on
            it.
        endpoint_id (UUID):
        event (NotificationDeliveryEvent):
        subject (NotificationDeliverySubject):
        status (NotificationDeliveryStatus): `queued` (waiting for its first or next attempt), `sending` (an attempt is
            in flight), `delivered` (a 2xx answer), `failed` (retries ran out).
        attempts (int):
        response_status (int | None): The last attempt's HTTP status; null when it had no answer.
        error (None | str): Why the last attempt failed (HTTP status and the start of the answer, or the connection
            error).
        next_attempt_at (datetime.datetime | None): When it is tried next, while `queued`.
        last_attempt_at (datetime.datetime | None):
        delivered_at (datetime.datetime | None):
        occurred_at (datetime.datetime): When the run or analysis reached its status (the body's `timestamp`).
        created_at (datetime.datetime):
    """

    id: UUID
    endpoint_id: UUID
    event: NotificationDeliveryEvent
    subject: NotificationDeliverySubject
    status: NotificationDeliveryStatus
    attempts: int
    response_status: int | None
    error: None | str
    next_attempt_at: datetime.datetime | None
    last_attempt_at: datetime.datetime | None
    delivered_at: datetime.datetime | None
    occurred_at: datetime.datetime
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        endpoint_id = str(self.endpoint_id)

        event = self.event.value

        subject = self.subject.to_dict()

        status = self.status.value

        attempts = self.attempts

        response_status: int | None
        response_status = self.response_status

        error: None | str
        error = self.error

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        last_attempt_at: None | str
        if isinstance(self.last_attempt_at, datetime.datetime):
            last_attempt_at = self.last_attempt_at.isoformat()
        else:
            last_attempt_at = self.last_attempt_at

        delivered_at: None | str
        if isinstance(self.delivered_at, datetime.datetime):
            delivered_at = self.delivered_at.isoformat()
        else:
            delivered_at = self.delivered_at

        occurred_at = self.occurred_at.isoformat()

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "endpoint_id": endpoint_id,
                "event": event,
                "subject": subject,
                "status": status,
                "attempts": attempts,
                "response_status": response_status,
                "error": error,
                "next_attempt_at": next_attempt_at,
                "last_attempt_at": last_attempt_at,
                "delivered_at": delivered_at,
                "occurred_at": occurred_at,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.notification_delivery_subject import NotificationDeliverySubject

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        endpoint_id = UUID(d.pop("endpoint_id"))

        event = NotificationDeliveryEvent(d.pop("event"))

        subject = NotificationDeliverySubject.from_dict(d.pop("subject"))

        status = NotificationDeliveryStatus(d.pop("status"))

        attempts = d.pop("attempts")

        def _parse_response_status(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        response_status = _parse_response_status(d.pop("response_status"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))

        def _parse_last_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_attempt_at = _parse_last_attempt_at(d.pop("last_attempt_at"))

        def _parse_delivered_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                delivered_at_type_0 = datetime.datetime.fromisoformat(data)

                return delivered_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        delivered_at = _parse_delivered_at(d.pop("delivered_at"))

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        notification_delivery = cls(
            id=id,
            endpoint_id=endpoint_id,
            event=event,
            subject=subject,
            status=status,
            attempts=attempts,
            response_status=response_status,
            error=error,
            next_attempt_at=next_attempt_at,
            last_attempt_at=last_attempt_at,
            delivered_at=delivered_at,
            occurred_at=occurred_at,
            created_at=created_at,
        )

        notification_delivery.additional_properties = d
        return notification_delivery

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
