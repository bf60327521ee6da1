from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_environment_type_0_image_source_type_1 import (
    AnalysisEnvironmentType0ImageSourceType1,
)
from ..models.analysis_environment_type_0_image_source_type_2_type_1 import (
    AnalysisEnvironmentType0ImageSourceType2Type1,
)
from ..models.analysis_environment_type_0_image_source_type_3_type_1 import (
    AnalysisEnvironmentType0ImageSourceType3Type1,
)

if TYPE_CHECKING:
    from ..models.analysis_environment_type_0_declared_image_type_0 import (
        AnalysisEnvironmentType0DeclaredImageType0,
    )
    from ..models.analysis_environment_type_0_steps_item import (
        AnalysisEnvironmentType0StepsItem,
    )
    from ..models.analysis_environment_type_0_toolchains_item import (
        AnalysisEnvironmentType0ToolchainsItem,
    )


T = TypeVar("T", bound="AnalysisEnvironmentType0")


@_attrs_define
class AnalysisEnvironmentType0:
    """What runs of this commit execute in: the image the catalog gives it and what is installed. null until the analysis
    has completed.

        Attributes:
            key (None | str): SHA-256 of the image and of what defines the install; runs with the same key share one
                installed environment. null: nothing to install, or no image fits.
            image (None | str): The image runs of this commit get on the default compute type: the repository's own
                (`image_source: repository`) or the catalog's; null when none fits (see `problem`).
            image_source (AnalysisEnvironmentType0ImageSourceType1 | AnalysisEnvironmentType0ImageSourceType2Type1 |
                AnalysisEnvironmentType0ImageSourceType3Type1 | None): `repository`: the image the repository declares
                (`declared_image`), used because the operator allows its registry (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES);
                `catalog`: the operator's catalog chose it (`notes` says why a declared image was not used); null when no image
                fits.
            declared_image (AnalysisEnvironmentType0DeclaredImageType0 | None): The image the repository declares for itself
                (a Dev Container configuration's `image`); null when it declares none.
            toolchains (list[AnalysisEnvironmentType0ToolchainsItem]):
            manifests (list[str]): The files that define the install (lockfiles and manifests).
            steps (list[AnalysisEnvironmentType0StepsItem]):
            notes (list[str]): What was seen and why it was or was not acted on; fits that are not exact.
            problem (None | str): Why no image of the catalog can provide this environment (runs of it are refused with
                422); null when one can.
    """

    key: None | str
    image: None | str
    image_source: (
        AnalysisEnvironmentType0ImageSourceType1
        | AnalysisEnvironmentType0ImageSourceType2Type1
        | AnalysisEnvironmentType0ImageSourceType3Type1
        | None
    )
    declared_image: AnalysisEnvironmentType0DeclaredImageType0 | None
    toolchains: list[AnalysisEnvironmentType0ToolchainsItem]
    manifests: list[str]
    steps: list[AnalysisEnvironmentType0StepsItem]
    notes: list[str]
    problem: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.analysis_environment_type_0_declared_image_type_0 import (
            AnalysisEnvironmentType0DeclaredImageType0,
        )

        key: None | str
        key = self.key

        image: None | str
        image = self.image

        image_source: None | str
        if (
            isinstance(self.image_source, AnalysisEnvironmentType0ImageSourceType1)
            or isinstance(
                self.image_source, AnalysisEnvironmentType0ImageSourceType2Type1
            )
            or isinstance(
                self.image_source, AnalysisEnvironmentType0ImageSourceType3Type1
            )
        ):
            image_source = self.image_source.value
        else:
            image_source = self.image_source

        declared_image: dict[str, Any] | None
        if isinstance(self.declared_image, AnalysisEnvironmentType0DeclaredImageType0):
            declared_image = self.declared_image.to_dict()
        else:
            declared_image = self.declared_image

        toolchains = []
        for toolchains_item_data in self.toolchains:
            toolchains_item = toolchains_item_data.to_dict()
            toolchains.append(toolchains_item)

        manifests = self.manifests

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        notes = self.notes

        problem: None | str
        problem = self.problem

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "key": key,
                "image": image,
                "image_source": image_source,
                "declared_image": declared_image,
                "toolchains": toolchains,
                "manifests": manifests,
                "steps": steps,
                "notes": notes,
                "problem": problem,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.analysis_environment_type_0_declared_image_type_0 import (
            AnalysisEnvironmentType0DeclaredImageType0,
        )
        from ..models.analysis_environment_type_0_steps_item import (
            AnalysisEnvironmentType0StepsItem,
        )
        from ..models.analysis_environment_type_0_toolchains_item import (
            AnalysisEnvironmentType0ToolchainsItem,
        )

        d = dict(src_dict)

        def _parse_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key = _parse_key(d.pop("key"))

        def _parse_image(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        image = _parse_image(d.pop("image"))

        def _parse_image_source(
            data: object,
        ) -> (
            AnalysisEnvironmentType0ImageSourceType1
            | AnalysisEnvironmentType0ImageSourceType2Type1
            | AnalysisEnvironmentType0ImageSourceType3Type1
            | None
        ):
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                image_source_type_1 = AnalysisEnvironmentType0ImageSourceType1(data)

                return image_source_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                image_source_type_2_type_1 = (
                    AnalysisEnvironmentType0ImageSourceType2Type1(data)
                )

                return image_source_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                image_source_type_3_type_1 = (
                    AnalysisEnvironmentType0ImageSourceType3Type1(data)
                )

                return image_source_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                AnalysisEnvironmentType0ImageSourceType1
                | AnalysisEnvironmentType0ImageSourceType2Type1
                | AnalysisEnvironmentType0ImageSourceType3Type1
                | None,
                data,
            )

        image_source = _parse_image_source(d.pop("image_source"))

        def _parse_declared_image(
            data: object,
        ) -> AnalysisEnvironmentType0DeclaredImageType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                declared_image_type_0 = (
                    AnalysisEnvironmentType0DeclaredImageType0.from_dict(data)
                )

                return declared_image_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnalysisEnvironmentType0DeclaredImageType0 | None, data)

        declared_image = _parse_declared_image(d.pop("declared_image"))

        toolchains = []
        _toolchains = d.pop("toolchains")
        for toolchains_item_data in _toolchains:
            toolchains_item = AnalysisEnvironmentType0ToolchainsItem.from_dict(
                toolchains_item_data
            )

            toolchains.append(toolchains_item)

        manifests = cast(list[str], d.pop("manifests"))

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = AnalysisEnvironmentType0StepsItem.from_dict(steps_item_data)

            steps.append(steps_item)

        notes = cast(list[str], d.pop("notes"))

        def _parse_problem(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        problem = _parse_problem(d.pop("problem"))

        analysis_environment_type_0 = cls(
            key=key,
            image=image,
            image_source=image_source,
            declared_image=declared_image,
            toolchains=toolchains,
            manifests=manifests,
            steps=steps,
            notes=notes,
            problem=problem,
        )

        analysis_environment_type_0.additional_properties = d
        return analysis_environment_type_0

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
