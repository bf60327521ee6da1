from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.run_metrics_final import RunMetricsFinal
    from ..models.run_metrics_series_item import RunMetricsSeriesItem


T = TypeVar("T", bound="RunMetrics")


@_attrs_define
class RunMetrics:
    """
    Attributes:
        series (list[RunMetricsSeriesItem]): Every series the run reported, by name.
        final (RunMetricsFinal): Each series' value at its highest step (the later one at equal steps).
        dropped (int): Points refused by the operator's bounds (series per run, points per series, name length).
    """

    series: list[RunMetricsSeriesItem]
    final: RunMetricsFinal
    dropped: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        series = []
        for series_item_data in self.series:
            series_item = series_item_data.to_dict()
            series.append(series_item)

        final = self.final.to_dict()

        dropped = self.dropped

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "series": series,
                "final": final,
                "dropped": dropped,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_metrics_final import RunMetricsFinal
        from ..models.run_metrics_series_item import RunMetricsSeriesItem

        d = dict(src_dict)
        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = RunMetricsSeriesItem.from_dict(series_item_data)

            series.append(series_item)

        final = RunMetricsFinal.from_dict(d.pop("final"))

        dropped = d.pop("dropped")

        run_metrics = cls(
            series=series,
            final=final,
            dropped=dropped,
        )

        run_metrics.additional_properties = d
        return run_metrics

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
