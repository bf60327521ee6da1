from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_line_stream import RunLogLineStream

T = TypeVar("T", bound="RunLogLine")


@_attrs_define
class RunLogLine:
    """
    Attributes:
        seq (int): Position in the run's output, shared by stdout and stderr (the live stream's `id`); increasing, may
            skip numbers.
        stream (RunLogLineStream):
        ts (datetime.datetime): When the line was written (RFC 3339 UTC).
        line (str): The line without its newline.
    """

    seq: int
    stream: RunLogLineStream
    ts: datetime.datetime
    line: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        stream = self.stream.value

        ts = self.ts.isoformat()

        line = self.line

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "stream": stream,
                "ts": ts,
                "line": line,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        seq = d.pop("seq")

        stream = RunLogLineStream(d.pop("stream"))

        ts = datetime.datetime.fromisoformat(d.pop("ts"))

        line = d.pop("line")

        run_log_line = cls(
            seq=seq,
            stream=stream,
            ts=ts,
            line=line,
        )

        run_log_line.additional_properties = d
        return run_log_line

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
