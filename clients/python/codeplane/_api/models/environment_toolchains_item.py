from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EnvironmentToolchainsItem")


@_attrs_define
class EnvironmentToolchainsItem:
    """
    Attributes:
        name (str):
        version (None | str): Normalised: Python `3.12`, Node `22`, Go `1.22`; null when any version does.
        exact (bool): true: that version was asked for; false: that version or newer.
        source (str): Why: the file and line that asked for it.
    """

    name: str
    version: None | str
    exact: bool
    source: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        version: None | str
        version = self.version

        exact = self.exact

        source = self.source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "version": version,
                "exact": exact,
                "source": source,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_version(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        version = _parse_version(d.pop("version"))

        exact = d.pop("exact")

        source = d.pop("source")

        environment_toolchains_item = cls(
            name=name,
            version=version,
            exact=exact,
            source=source,
        )

        environment_toolchains_item.additional_properties = d
        return environment_toolchains_item

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
