from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_repo_summary_type_0_language import (
    AnalysisRepoSummaryType0Language,
)

if TYPE_CHECKING:
    from ..models.analysis_repo_summary_type_0_languages_item import (
        AnalysisRepoSummaryType0LanguagesItem,
    )
    from ..models.analysis_repo_summary_type_0_skipped import (
        AnalysisRepoSummaryType0Skipped,
    )


T = TypeVar("T", bound="AnalysisRepoSummaryType0")


@_attrs_define
class AnalysisRepoSummaryType0:
    """null until the analysis has completed.

    Attributes:
        language (AnalysisRepoSummaryType0Language): The language of `text`.
        text (str): A short description of the repository, written from what the analyzer found.
        title (None | str): The README's title.
        description (None | str): The README's first paragraph.
        languages (list[AnalysisRepoSummaryType0LanguagesItem]): By lines, most first.
        file_count (int):
        total_bytes (int):
        license_ (None | str): An SPDX identifier when the licence file is recognised.
        manifests (list[str]): Dependency manifests (package.json, requirements.txt, go.mod, ...).
        frameworks (list[str]): Notable libraries and frameworks found in the manifests.
        truncated (bool): A size or time budget was reached: some files were not looked at.
        skipped (AnalysisRepoSummaryType0Skipped):
    """

    language: AnalysisRepoSummaryType0Language
    text: str
    title: None | str
    description: None | str
    languages: list[AnalysisRepoSummaryType0LanguagesItem]
    file_count: int
    total_bytes: int
    license_: None | str
    manifests: list[str]
    frameworks: list[str]
    truncated: bool
    skipped: AnalysisRepoSummaryType0Skipped
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        language = self.language.value

        text = self.text

        title: None | str
        title = self.title

        description: None | str
        description = self.description

        languages = []
        for languages_item_data in self.languages:
            languages_item = languages_item_data.to_dict()
            languages.append(languages_item)

        file_count = self.file_count

        total_bytes = self.total_bytes

        license_: None | str
        license_ = self.license_

        manifests = self.manifests

        frameworks = self.frameworks

        truncated = self.truncated

        skipped = self.skipped.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "language": language,
                "text": text,
                "title": title,
                "description": description,
                "languages": languages,
                "file_count": file_count,
                "total_bytes": total_bytes,
                "license": license_,
                "manifests": manifests,
                "frameworks": frameworks,
                "truncated": truncated,
                "skipped": skipped,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.analysis_repo_summary_type_0_languages_item import (
            AnalysisRepoSummaryType0LanguagesItem,
        )
        from ..models.analysis_repo_summary_type_0_skipped import (
            AnalysisRepoSummaryType0Skipped,
        )

        d = dict(src_dict)
        language = AnalysisRepoSummaryType0Language(d.pop("language"))

        text = d.pop("text")

        def _parse_title(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        title = _parse_title(d.pop("title"))

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        languages = []
        _languages = d.pop("languages")
        for languages_item_data in _languages:
            languages_item = AnalysisRepoSummaryType0LanguagesItem.from_dict(
                languages_item_data
            )

            languages.append(languages_item)

        file_count = d.pop("file_count")

        total_bytes = d.pop("total_bytes")

        def _parse_license_(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        license_ = _parse_license_(d.pop("license"))

        manifests = cast(list[str], d.pop("manifests"))

        frameworks = cast(list[str], d.pop("frameworks"))

        truncated = d.pop("truncated")

        skipped = AnalysisRepoSummaryType0Skipped.from_dict(d.pop("skipped"))

        analysis_repo_summary_type_0 = cls(
            language=language,
            text=text,
            title=title,
            description=description,
            languages=languages,
            file_count=file_count,
            total_bytes=total_bytes,
            license_=license_,
            manifests=manifests,
            frameworks=frameworks,
            truncated=truncated,
            skipped=skipped,
        )

        analysis_repo_summary_type_0.additional_properties = d
        return analysis_repo_summary_type_0

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
