from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.environment_status import EnvironmentStatus

if TYPE_CHECKING:
    from ..models.environment_manifests_item import EnvironmentManifestsItem
    from ..models.environment_steps_item import EnvironmentStepsItem
    from ..models.environment_toolchains_item import EnvironmentToolchainsItem


T = TypeVar("T", bound="Environment")


@_attrs_define
class Environment:
    """
    Attributes:
        key (str):
        image (str):
        status (EnvironmentStatus):
        size (int | None): Bytes of the stored archive; null until it is stored.
        repository_id (None | UUID): The repository it was first built for (null once that repository is deleted).
        commit_hash (str): The commit it was built from; later commits with the same manifests reuse it.
        toolchains (list[EnvironmentToolchainsItem]):
        manifests (list[EnvironmentManifestsItem]):
        steps (list[EnvironmentStepsItem]):
        error (None | str): Why the build failed, naming the step and its last lines.
        log (None | str): The install's output (its last 256 KiB), for builds that have ended; only in GET
            /v1/environments/{key}, null in lists.
        created_at (datetime.datetime):
        completed_at (datetime.datetime | None):
        last_used_at (datetime.datetime):
    """

    key: str
    image: str
    status: EnvironmentStatus
    size: int | None
    repository_id: None | UUID
    commit_hash: str
    toolchains: list[EnvironmentToolchainsItem]
    manifests: list[EnvironmentManifestsItem]
    steps: list[EnvironmentStepsItem]
    error: None | str
    log: None | str
    created_at: datetime.datetime
    completed_at: datetime.datetime | None
    last_used_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        image = self.image

        status = self.status.value

        size: int | None
        size = self.size

        repository_id: None | str
        if isinstance(self.repository_id, UUID):
            repository_id = str(self.repository_id)
        else:
            repository_id = self.repository_id

        commit_hash = self.commit_hash

        toolchains = []
        for toolchains_item_data in self.toolchains:
            toolchains_item = toolchains_item_data.to_dict()
            toolchains.append(toolchains_item)

        manifests = []
        for manifests_item_data in self.manifests:
            manifests_item = manifests_item_data.to_dict()
            manifests.append(manifests_item)

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        error: None | str
        error = self.error

        log: None | str
        log = self.log

        created_at = self.created_at.isoformat()

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        last_used_at = self.last_used_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "key": key,
                "image": image,
                "status": status,
                "size": size,
                "repository_id": repository_id,
                "commit_hash": commit_hash,
                "toolchains": toolchains,
                "manifests": manifests,
                "steps": steps,
                "error": error,
                "log": log,
                "created_at": created_at,
                "completed_at": completed_at,
                "last_used_at": last_used_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.environment_manifests_item import EnvironmentManifestsItem
        from ..models.environment_steps_item import EnvironmentStepsItem
        from ..models.environment_toolchains_item import EnvironmentToolchainsItem

        d = dict(src_dict)
        key = d.pop("key")

        image = d.pop("image")

        status = EnvironmentStatus(d.pop("status"))

        def _parse_size(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        size = _parse_size(d.pop("size"))

        def _parse_repository_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                repository_id_type_0 = UUID(data)

                return repository_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        repository_id = _parse_repository_id(d.pop("repository_id"))

        commit_hash = d.pop("commit_hash")

        toolchains = []
        _toolchains = d.pop("toolchains")
        for toolchains_item_data in _toolchains:
            toolchains_item = EnvironmentToolchainsItem.from_dict(toolchains_item_data)

            toolchains.append(toolchains_item)

        manifests = []
        _manifests = d.pop("manifests")
        for manifests_item_data in _manifests:
            manifests_item = EnvironmentManifestsItem.from_dict(manifests_item_data)

            manifests.append(manifests_item)

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = EnvironmentStepsItem.from_dict(steps_item_data)

            steps.append(steps_item)

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_log(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        log = _parse_log(d.pop("log"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)

                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))

        last_used_at = datetime.datetime.fromisoformat(d.pop("last_used_at"))

        environment = cls(
            key=key,
            image=image,
            status=status,
            size=size,
            repository_id=repository_id,
            commit_hash=commit_hash,
            toolchains=toolchains,
            manifests=manifests,
            steps=steps,
            error=error,
            log=log,
            created_at=created_at,
            completed_at=completed_at,
            last_used_at=last_used_at,
        )

        environment.additional_properties = d
        return environment

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
