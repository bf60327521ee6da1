from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.notification_delivery_subject_kind import NotificationDeliverySubjectKind

T = TypeVar("T", bound="NotificationDeliverySubject")


@_attrs_define
class NotificationDeliverySubject:
    """
    Attributes:
        kind (NotificationDeliverySubjectKind):
        id (UUID):
    """

    kind: NotificationDeliverySubjectKind
    id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        id = str(self.id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = NotificationDeliverySubjectKind(d.pop("kind"))

        id = UUID(d.pop("id"))

        notification_delivery_subject = cls(
            kind=kind,
            id=id,
        )

        notification_delivery_subject.additional_properties = d
        return notification_delivery_subject

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
