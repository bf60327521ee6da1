from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_log_page_stream_type_1 import RunLogPageStreamType1
from ..models.run_log_page_stream_type_2_type_1 import RunLogPageStreamType2Type1
from ..models.run_log_page_stream_type_3_type_1 import RunLogPageStreamType3Type1

if TYPE_CHECKING:
    from ..models.run_log_line import RunLogLine


T = TypeVar("T", bound="RunLogPage")


@_attrs_define
class RunLogPage:
    """
    Attributes:
        run_id (UUID):
        stream (None | RunLogPageStreamType1 | RunLogPageStreamType2Type1 | RunLogPageStreamType3Type1): The stream
            read; null: both, interleaved by seq.
        lines (list[RunLogLine]): In seq order.
        next_after (int | None): Pass as ?after= for the next page; null when this page reached the last line stored so
            far.
        last_seq (int): The seq of the run's last stored line, either stream; 0 when none.
        complete (bool): The run is over and all its output is stored: no line will be added.
        truncated (bool): The run wrote more than the stored cap on this stream (either, for both); the start is kept.
    """

    run_id: UUID
    stream: (
        None
        | RunLogPageStreamType1
        | RunLogPageStreamType2Type1
        | RunLogPageStreamType3Type1
    )
    lines: list[RunLogLine]
    next_after: int | None
    last_seq: int
    complete: bool
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = str(self.run_id)

        stream: None | str
        if (
            isinstance(self.stream, RunLogPageStreamType1)
            or isinstance(self.stream, RunLogPageStreamType2Type1)
            or isinstance(self.stream, RunLogPageStreamType3Type1)
        ):
            stream = self.stream.value
        else:
            stream = self.stream

        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)

        next_after: int | None
        next_after = self.next_after

        last_seq = self.last_seq

        complete = self.complete

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "stream": stream,
                "lines": lines,
                "next_after": next_after,
                "last_seq": last_seq,
                "complete": complete,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_log_line import RunLogLine

        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        def _parse_stream(
            data: object,
        ) -> (
            None
            | RunLogPageStreamType1
            | RunLogPageStreamType2Type1
            | RunLogPageStreamType3Type1
        ):
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                stream_type_1 = RunLogPageStreamType1(data)

                return stream_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                stream_type_2_type_1 = RunLogPageStreamType2Type1(data)

                return stream_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                stream_type_3_type_1 = RunLogPageStreamType3Type1(data)

                return stream_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | RunLogPageStreamType1
                | RunLogPageStreamType2Type1
                | RunLogPageStreamType3Type1,
                data,
            )

        stream = _parse_stream(d.pop("stream"))

        lines = []
        _lines = d.pop("lines")
        for lines_item_data in _lines:
            lines_item = RunLogLine.from_dict(lines_item_data)

            lines.append(lines_item)

        def _parse_next_after(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        next_after = _parse_next_after(d.pop("next_after"))

        last_seq = d.pop("last_seq")

        complete = d.pop("complete")

        truncated = d.pop("truncated")

        run_log_page = cls(
            run_id=run_id,
            stream=stream,
            lines=lines,
            next_after=next_after,
            last_seq=last_seq,
            complete=complete,
            truncated=truncated,
        )

        run_log_page.additional_properties = d
        return run_log_page

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
