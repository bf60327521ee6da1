from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_timeline_item_cache import RunTimelineItemCache
from ..models.run_timeline_item_event import RunTimelineItemEvent
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunTimelineItem")


@_attrs_define
class RunTimelineItem:
    """
    Attributes:
        event (RunTimelineItemEvent):
        at (datetime.datetime):
        cache (RunTimelineItemCache | Unset): environment_ready only: restored from the cache (`hit`) or built while the
            run waited (`built`).
        warm (bool | Unset): admitted only: the run started on a warm pool's waiting pod, claimed at `at` (no Job or pod
            was created for it).
        pool (str | Unset): admitted only, with `warm`: the warm pool whose pod the run claimed.
    """

    event: RunTimelineItemEvent
    at: datetime.datetime
    cache: RunTimelineItemCache | Unset = UNSET
    warm: bool | Unset = UNSET
    pool: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event = self.event.value

        at = self.at.isoformat()

        cache: str | Unset = UNSET
        if not isinstance(self.cache, Unset):
            cache = self.cache.value

        warm = self.warm

        pool = self.pool

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event": event,
                "at": at,
            }
        )
        if cache is not UNSET:
            field_dict["cache"] = cache
        if warm is not UNSET:
            field_dict["warm"] = warm
        if pool is not UNSET:
            field_dict["pool"] = pool

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event = RunTimelineItemEvent(d.pop("event"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        _cache = d.pop("cache", UNSET)
        cache: RunTimelineItemCache | Unset
        if isinstance(_cache, Unset):
            cache = UNSET
        else:
            cache = RunTimelineItemCache(_cache)

        warm = d.pop("warm", UNSET)

        pool = d.pop("pool", UNSET)

        run_timeline_item = cls(
            event=event,
            at=at,
            cache=cache,
            warm=warm,
            pool=pool,
        )

        run_timeline_item.additional_properties = d
        return run_timeline_item

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
