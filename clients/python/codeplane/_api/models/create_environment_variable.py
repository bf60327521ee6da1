from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateEnvironmentVariable")


@_attrs_define
class CreateEnvironmentVariable:
    """
    Attributes:
        name (str):
        value (str):
        secret (bool | Unset): Secret values are never returned. Defaults to true. Default: True.
        repository_id (UUID | Unset): Scope to one repository; omit for the whole account.
    """

    name: str
    value: str
    secret: bool | Unset = True
    repository_id: UUID | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        secret = self.secret

        repository_id: str | Unset = UNSET
        if not isinstance(self.repository_id, Unset):
            repository_id = str(self.repository_id)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "value": value,
            }
        )
        if secret is not UNSET:
            field_dict["secret"] = secret
        if repository_id is not UNSET:
            field_dict["repository_id"] = repository_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        value = d.pop("value")

        secret = d.pop("secret", UNSET)

        _repository_id = d.pop("repository_id", UNSET)
        repository_id: UUID | Unset
        if isinstance(_repository_id, Unset):
            repository_id = UNSET
        else:
            repository_id = UUID(_repository_id)

        create_environment_variable = cls(
            name=name,
            value=value,
            secret=secret,
            repository_id=repository_id,
        )

        return create_environment_variable
