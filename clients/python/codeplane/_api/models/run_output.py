from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RunOutput")


@_attrs_define
class RunOutput:
    """
    Attributes:
        path (str): Relative to the run's output directory (or the checkout, for the experiment's analysed output
            paths).
        size (int): Bytes.
        sha256 (str): Hex SHA-256 of the bytes, computed as they were stored; the download's ETag.
        content_type (str): Told by the file name's extension; `application/octet-stream` when unknown.
    """

    path: str
    size: int
    sha256: str
    content_type: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        size = self.size

        sha256 = self.sha256

        content_type = self.content_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "path": path,
                "size": size,
                "sha256": sha256,
                "content_type": content_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        path = d.pop("path")

        size = d.pop("size")

        sha256 = d.pop("sha256")

        content_type = d.pop("content_type")

        run_output = cls(
            path=path,
            size=size,
            sha256=sha256,
            content_type=content_type,
        )

        run_output.additional_properties = d
        return run_output

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
