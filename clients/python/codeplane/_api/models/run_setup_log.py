from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_setup_log_status_type_1 import RunSetupLogStatusType1
from ..models.run_setup_log_status_type_2_type_1 import RunSetupLogStatusType2Type1
from ..models.run_setup_log_status_type_3_type_1 import RunSetupLogStatusType3Type1

T = TypeVar("T", bound="RunSetupLog")


@_attrs_define
class RunSetupLog:
    """
    Attributes:
        run_id (UUID):
        environment_key (None | str): The run's environment; null when it has none (nothing installed).
        status (None | RunSetupLogStatusType1 | RunSetupLogStatusType2Type1 | RunSetupLogStatusType3Type1): The
            environment's build: `building`, `ready` or `failed`; null without an environment.
        content (str): The install's output (its last 256 KiB), kept with the environment once its build has ended: the
            same text for every run of the key.
    """

    run_id: UUID
    environment_key: None | str
    status: (
        None
        | RunSetupLogStatusType1
        | RunSetupLogStatusType2Type1
        | RunSetupLogStatusType3Type1
    )
    content: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = str(self.run_id)

        environment_key: None | str
        environment_key = self.environment_key

        status: None | str
        if (
            isinstance(self.status, RunSetupLogStatusType1)
            or isinstance(self.status, RunSetupLogStatusType2Type1)
            or isinstance(self.status, RunSetupLogStatusType3Type1)
        ):
            status = self.status.value
        else:
            status = self.status

        content = self.content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "environment_key": environment_key,
                "status": status,
                "content": content,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        def _parse_environment_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        environment_key = _parse_environment_key(d.pop("environment_key"))

        def _parse_status(
            data: object,
        ) -> (
            None
            | RunSetupLogStatusType1
            | RunSetupLogStatusType2Type1
            | RunSetupLogStatusType3Type1
        ):
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_1 = RunSetupLogStatusType1(data)

                return status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_2_type_1 = RunSetupLogStatusType2Type1(data)

                return status_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_3_type_1 = RunSetupLogStatusType3Type1(data)

                return status_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | RunSetupLogStatusType1
                | RunSetupLogStatusType2Type1
                | RunSetupLogStatusType3Type1,
                data,
            )

        status = _parse_status(d.pop("status"))

        content = d.pop("content")

        run_setup_log = cls(
            run_id=run_id,
            environment_key=environment_key,
            status=status,
            content=content,
        )

        run_setup_log.additional_properties = d
        return run_setup_log

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
