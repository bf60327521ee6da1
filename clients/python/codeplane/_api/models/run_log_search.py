from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.run_log_line import RunLogLine


T = TypeVar("T", bound="RunLogSearch")


@_attrs_define
class RunLogSearch:
    """
    Attributes:
        run_id (UUID):
        q (str):
        items (list[RunLogLine]): Matching lines, in seq order.
        next_after (int | None): Pass as ?after= to go on searching; null when every stored line after `after` was
            searched. A page may hold fewer than `limit` matches (even none) and still have a `next_after`: the search stops
            after its time budget.
        searched_through (int): Every stored line with seq up to this (after `after`) was searched.
        last_seq (int): The seq of the run's last stored line when the search ran.
    """

    run_id: UUID
    q: str
    items: list[RunLogLine]
    next_after: int | None
    searched_through: int
    last_seq: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = str(self.run_id)

        q = self.q

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        next_after: int | None
        next_after = self.next_after

        searched_through = self.searched_through

        last_seq = self.last_seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "q": q,
                "items": items,
                "next_after": next_after,
                "searched_through": searched_through,
                "last_seq": last_seq,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_log_line import RunLogLine

        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        q = d.pop("q")

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = RunLogLine.from_dict(items_item_data)

            items.append(items_item)

        def _parse_next_after(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        next_after = _parse_next_after(d.pop("next_after"))

        searched_through = d.pop("searched_through")

        last_seq = d.pop("last_seq")

        run_log_search = cls(
            run_id=run_id,
            q=q,
            items=items,
            next_after=next_after,
            searched_through=searched_through,
            last_seq=last_seq,
        )

        run_log_search.additional_properties = d
        return run_log_search

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
