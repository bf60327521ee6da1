from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_experiments_item_parameters_item_category import (
    AnalysisExperimentsItemParametersItemCategory,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AnalysisExperimentsItemParametersItem")


@_attrs_define
class AnalysisExperimentsItemParametersItem:
    """
    Attributes:
        name (str): The name a run's `parameters` object uses.
        value (bool | float | None | str): The default, null when the program has none.
        category (AnalysisExperimentsItemParametersItemCategory): The value's type: string, integer, number, boolean
            (rendered as option=value), flag (a switch: present when true, absent when false) or path (a file or folder).
        cli_option (None | str): How the value is passed: null for a positional argument; otherwise the option's words
            ("--lr", "-p alpha"), followed by the value as its own argument, or joined to it when the option ends with "="
            ("EPOCHS=", "-verbose=").
        choices (list[bool | float | str] | None):
        description (None | str):
        required (bool): The program refuses to start without it (a positional argument, or an option marked required).
        env_var (None | str | Unset): The environment variable the program reads the value from (a web server's `PORT`):
            a run passes it as `env NAME=value` before the command instead of as an argument, and cli_option is null. Absent
            or null: an argument.
    """

    name: str
    value: bool | float | None | str
    category: AnalysisExperimentsItemParametersItemCategory
    cli_option: None | str
    choices: list[bool | float | str] | None
    description: None | str
    required: bool
    env_var: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value: bool | float | None | str
        value = self.value

        category = self.category.value

        cli_option: None | str
        cli_option = self.cli_option

        choices: list[bool | float | str] | None
        if isinstance(self.choices, list):
            choices = []
            for choices_type_0_item_data in self.choices:
                choices_type_0_item: bool | float | str
                choices_type_0_item = choices_type_0_item_data
                choices.append(choices_type_0_item)

        else:
            choices = self.choices

        description: None | str
        description = self.description

        required = self.required

        env_var: None | str | Unset
        if isinstance(self.env_var, Unset):
            env_var = UNSET
        else:
            env_var = self.env_var

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "value": value,
                "category": category,
                "cli_option": cli_option,
                "choices": choices,
                "description": description,
                "required": required,
            }
        )
        if env_var is not UNSET:
            field_dict["env_var"] = env_var

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_value(data: object) -> bool | float | None | str:
            if data is None:
                return data
            return cast(bool | float | None | str, data)

        value = _parse_value(d.pop("value"))

        category = AnalysisExperimentsItemParametersItemCategory(d.pop("category"))

        def _parse_cli_option(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        cli_option = _parse_cli_option(d.pop("cli_option"))

        def _parse_choices(data: object) -> list[bool | float | str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                choices_type_0 = []
                _choices_type_0 = data
                for choices_type_0_item_data in _choices_type_0:

                    def _parse_choices_type_0_item(data: object) -> bool | float | str:
                        return cast(bool | float | str, data)

                    choices_type_0_item = _parse_choices_type_0_item(
                        choices_type_0_item_data
                    )

                    choices_type_0.append(choices_type_0_item)

                return choices_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[bool | float | str] | None, data)

        choices = _parse_choices(d.pop("choices"))

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        required = d.pop("required")

        def _parse_env_var(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        env_var = _parse_env_var(d.pop("env_var", UNSET))

        analysis_experiments_item_parameters_item = cls(
            name=name,
            value=value,
            category=category,
            cli_option=cli_option,
            choices=choices,
            description=description,
            required=required,
            env_var=env_var,
        )

        analysis_experiments_item_parameters_item.additional_properties = d
        return analysis_experiments_item_parameters_item

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
