from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.run_metrics_series_item_points_item import (
        RunMetricsSeriesItemPointsItem,
    )


T = TypeVar("T", bound="RunMetricsSeriesItem")


@_attrs_define
class RunMetricsSeriesItem:
    """
    Attributes:
        name (str):
        points (list[RunMetricsSeriesItemPointsItem]): By step; points at one step in the order reported.
    """

    name: str
    points: list[RunMetricsSeriesItemPointsItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        points = []
        for points_item_data in self.points:
            points_item = points_item_data.to_dict()
            points.append(points_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "points": points,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_metrics_series_item_points_item import (
            RunMetricsSeriesItemPointsItem,
        )

        d = dict(src_dict)
        name = d.pop("name")

        points = []
        _points = d.pop("points")
        for points_item_data in _points:
            points_item = RunMetricsSeriesItemPointsItem.from_dict(points_item_data)

            points.append(points_item)

        run_metrics_series_item = cls(
            name=name,
            points=points,
        )

        run_metrics_series_item.additional_properties = d
        return run_metrics_series_item

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
