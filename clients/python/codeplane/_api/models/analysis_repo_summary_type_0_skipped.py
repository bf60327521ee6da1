from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisRepoSummaryType0Skipped")


@_attrs_define
class AnalysisRepoSummaryType0Skipped:
    """
    Attributes:
        binary (int): Files that were to be read (source, manifests, READMEs) but hold binary data.
        too_large (int):
        symlinks (int):
        unparsable (int):
    """

    binary: int
    too_large: int
    symlinks: int
    unparsable: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        binary = self.binary

        too_large = self.too_large

        symlinks = self.symlinks

        unparsable = self.unparsable

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "binary": binary,
                "too_large": too_large,
                "symlinks": symlinks,
                "unparsable": unparsable,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        binary = d.pop("binary")

        too_large = d.pop("too_large")

        symlinks = d.pop("symlinks")

        unparsable = d.pop("unparsable")

        analysis_repo_summary_type_0_skipped = cls(
            binary=binary,
            too_large=too_large,
            symlinks=symlinks,
            unparsable=unparsable,
        )

        analysis_repo_summary_type_0_skipped.additional_properties = d
        return analysis_repo_summary_type_0_skipped

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
