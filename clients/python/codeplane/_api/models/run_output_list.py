from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.refused_output import RefusedOutput
    from ..models.run_output import RunOutput


T = TypeVar("T", bound="RunOutputList")


@_attrs_define
class RunOutputList:
    """
    Attributes:
        items (list[RunOutput]): Every stored output, in byte order of the path.
        refused (list[RefusedOutput]): Files the run wrote that were not stored (over a limit): nothing of them is kept.
    """

    items: list[RunOutput]
    refused: list[RefusedOutput]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        refused = []
        for refused_item_data in self.refused:
            refused_item = refused_item_data.to_dict()
            refused.append(refused_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "items": items,
                "refused": refused,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.refused_output import RefusedOutput
        from ..models.run_output import RunOutput

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = RunOutput.from_dict(items_item_data)

            items.append(items_item)

        refused = []
        _refused = d.pop("refused")
        for refused_item_data in _refused:
            refused_item = RefusedOutput.from_dict(refused_item_data)

            refused.append(refused_item)

        run_output_list = cls(
            items=items,
            refused=refused,
        )

        run_output_list.additional_properties = d
        return run_output_list

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
