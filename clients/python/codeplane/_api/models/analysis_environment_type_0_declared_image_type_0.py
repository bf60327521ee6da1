from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisEnvironmentType0DeclaredImageType0")


@_attrs_define
class AnalysisEnvironmentType0DeclaredImageType0:
    """The image the repository declares for itself (a Dev Container configuration's `image`); null when it declares none.

    Attributes:
        image (str): As the repository wrote it, e.g. `python:3.12` or `ghcr.io/acme/dev@sha256:...`.
        path (str): The Dev Container configuration that declares it, e.g. `.devcontainer/devcontainer.json`.
    """

    image: str
    path: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        image = self.image

        path = self.path

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "image": image,
                "path": path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        image = d.pop("image")

        path = d.pop("path")

        analysis_environment_type_0_declared_image_type_0 = cls(
            image=image,
            path=path,
        )

        analysis_environment_type_0_declared_image_type_0.additional_properties = d
        return analysis_environment_type_0_declared_image_type_0

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
