from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.create_analysis_language import CreateAnalysisLanguage
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateAnalysis")


@_attrs_define
class CreateAnalysis:
    """
    Attributes:
        branch (str | Unset): The branch this commit is analysed for (recorded with the analysis).
        language (CreateAnalysisLanguage | Unset): The language of repo_summary.text; default en.
    """

    branch: str | Unset = UNSET
    language: CreateAnalysisLanguage | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        branch = self.branch

        language: str | Unset = UNSET
        if not isinstance(self.language, Unset):
            language = self.language.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if branch is not UNSET:
            field_dict["branch"] = branch
        if language is not UNSET:
            field_dict["language"] = language

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        branch = d.pop("branch", UNSET)

        _language = d.pop("language", UNSET)
        language: CreateAnalysisLanguage | Unset
        if isinstance(_language, Unset):
            language = UNSET
        else:
            language = CreateAnalysisLanguage(_language)

        create_analysis = cls(
            branch=branch,
            language=language,
        )

        return create_analysis
