from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="UpdateEnvironmentVariable")


@_attrs_define
class UpdateEnvironmentVariable:
    """
    Attributes:
        name (str | Unset):
        value (str | Unset):
        secret (bool | Unset):
    """

    name: str | Unset = UNSET
    value: str | Unset = UNSET
    secret: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if value is not UNSET:
            field_dict["value"] = value
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        value = d.pop("value", UNSET)

        secret = d.pop("secret", UNSET)

        update_environment_variable = cls(
            name=name,
            value=value,
            secret=secret,
        )

        return update_environment_variable
