from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_environment_type_0_cache_type_1 import RunEnvironmentType0CacheType1
from ..models.run_environment_type_0_cache_type_2_type_1 import (
    RunEnvironmentType0CacheType2Type1,
)
from ..models.run_environment_type_0_cache_type_3_type_1 import (
    RunEnvironmentType0CacheType3Type1,
)

T = TypeVar("T", bound="RunEnvironmentType0")


@_attrs_define
class RunEnvironmentType0:
    """The environment the run executes in; null: the runner image, nothing installed.

    Attributes:
        key (None | str): The installed environment's key (GET /v1/environments/{key}); null: nothing to install.
        image (str):
        cache (None | RunEnvironmentType0CacheType1 | RunEnvironmentType0CacheType2Type1 |
            RunEnvironmentType0CacheType3Type1): `hit`: restored from the cache; `built`: the run waited for its build; null
            until its pod is made.
        warnings (list[str]): Fits that are not exact (a toolchain version the catalog lacks: the nearest was used).
    """

    key: None | str
    image: str
    cache: (
        None
        | RunEnvironmentType0CacheType1
        | RunEnvironmentType0CacheType2Type1
        | RunEnvironmentType0CacheType3Type1
    )
    warnings: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        key: None | str
        key = self.key

        image = self.image

        cache: None | str
        if (
            isinstance(self.cache, RunEnvironmentType0CacheType1)
            or isinstance(self.cache, RunEnvironmentType0CacheType2Type1)
            or isinstance(self.cache, RunEnvironmentType0CacheType3Type1)
        ):
            cache = self.cache.value
        else:
            cache = self.cache

        warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "key": key,
                "image": image,
                "cache": cache,
                "warnings": warnings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key = _parse_key(d.pop("key"))

        image = d.pop("image")

        def _parse_cache(
            data: object,
        ) -> (
            None
            | RunEnvironmentType0CacheType1
            | RunEnvironmentType0CacheType2Type1
            | RunEnvironmentType0CacheType3Type1
        ):
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cache_type_1 = RunEnvironmentType0CacheType1(data)

                return cache_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cache_type_2_type_1 = RunEnvironmentType0CacheType2Type1(data)

                return cache_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cache_type_3_type_1 = RunEnvironmentType0CacheType3Type1(data)

                return cache_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | RunEnvironmentType0CacheType1
                | RunEnvironmentType0CacheType2Type1
                | RunEnvironmentType0CacheType3Type1,
                data,
            )

        cache = _parse_cache(d.pop("cache"))

        warnings = cast(list[str], d.pop("warnings"))

        run_environment_type_0 = cls(
            key=key,
            image=image,
            cache=cache,
            warnings=warnings,
        )

        run_environment_type_0.additional_properties = d
        return run_environment_type_0

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
