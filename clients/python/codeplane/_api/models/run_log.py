from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_stream import RunLogStream

T = TypeVar("T", bound="RunLog")


@_attrs_define
class RunLog:
    """
    Attributes:
        run_id (UUID):
        stream (RunLogStream):
        content (str):
        size (int): Bytes of the stored log (up to the configured cap).
        truncated (bool): True when the run wrote more than the cap; the start is kept.
    """

    run_id: UUID
    stream: RunLogStream
    content: str
    size: int
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = str(self.run_id)

        stream = self.stream.value

        content = self.content

        size = self.size

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "stream": stream,
                "content": content,
                "size": size,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        stream = RunLogStream(d.pop("stream"))

        content = d.pop("content")

        size = d.pop("size")

        truncated = d.pop("truncated")

        run_log = cls(
            run_id=run_id,
            stream=stream,
            content=content,
            size=size,
            truncated=truncated,
        )

        run_log.additional_properties = d
        return run_log

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
