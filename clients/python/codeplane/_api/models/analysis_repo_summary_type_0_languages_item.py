from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisRepoSummaryType0LanguagesItem")


@_attrs_define
class AnalysisRepoSummaryType0LanguagesItem:
    """
    Attributes:
        name (str):
        files (int):
        lines (int):
        bytes_ (int):
    """

    name: str
    files: int
    lines: int
    bytes_: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        files = self.files

        lines = self.lines

        bytes_ = self.bytes_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "files": files,
                "lines": lines,
                "bytes": bytes_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        files = d.pop("files")

        lines = d.pop("lines")

        bytes_ = d.pop("bytes")

        analysis_repo_summary_type_0_languages_item = cls(
            name=name,
            files=files,
            lines=lines,
            bytes_=bytes_,
        )

        analysis_repo_summary_type_0_languages_item.additional_properties = d
        return analysis_repo_summary_type_0_languages_item

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
