from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_experiments_item_kind import AnalysisExperimentsItemKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.analysis_experiments_item_parameters_item import (
        AnalysisExperimentsItemParametersItem,
    )


T = TypeVar("T", bound="AnalysisExperimentsItem")


@_attrs_define
class AnalysisExperimentsItem:
    """
    Attributes:
        id (str): Stable across commits: the kind and where it was found, e.g. `python:scripts/train.py`, `npm:test`,
            `go:./cmd/server`, `make:train`.
        title (str):
        description (None | str):
        entry_point (str): The command line, as a user would type it in the repository's root.
        command (list[str]): entry_point as argv; a run appends the parameters to it.
        language (str):
        kind (AnalysisExperimentsItemKind):
        path (str): The file (or folder, for a Go package) that defines it.
        inputs (list[str]): Files or folders it reads, where they can be told.
        outputs (list[str]): Files or folders it writes, where they can be told.
        parameters (list[AnalysisExperimentsItemParametersItem]):
        required_env_vars (list[str] | Unset): Variables this experiment cannot start without: those its entry point
            reaches (its module graph for Python and Node, its target's recipe for Make, its script for npm) reads with no
            fallback. A run of it is refused while one is not configured.
    """

    id: str
    title: str
    description: None | str
    entry_point: str
    command: list[str]
    language: str
    kind: AnalysisExperimentsItemKind
    path: str
    inputs: list[str]
    outputs: list[str]
    parameters: list[AnalysisExperimentsItemParametersItem]
    required_env_vars: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        title = self.title

        description: None | str
        description = self.description

        entry_point = self.entry_point

        command = self.command

        language = self.language

        kind = self.kind.value

        path = self.path

        inputs = self.inputs

        outputs = self.outputs

        parameters = []
        for parameters_item_data in self.parameters:
            parameters_item = parameters_item_data.to_dict()
            parameters.append(parameters_item)

        required_env_vars: list[str] | Unset = UNSET
        if not isinstance(self.required_env_vars, Unset):
            required_env_vars = self.required_env_vars

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "title": title,
                "description": description,
                "entry_point": entry_point,
                "command": command,
                "language": language,
                "kind": kind,
                "path": path,
                "inputs": inputs,
                "outputs": outputs,
                "parameters": parameters,
            }
        )
        if required_env_vars is not UNSET:
            field_dict["required_env_vars"] = required_env_vars

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.analysis_experiments_item_parameters_item import (
            AnalysisExperimentsItemParametersItem,
        )

        d = dict(src_dict)
        id = d.pop("id")

        title = d.pop("title")

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        entry_point = d.pop("entry_point")

        command = cast(list[str], d.pop("command"))

        language = d.pop("language")

        kind = AnalysisExperimentsItemKind(d.pop("kind"))

        path = d.pop("path")

        inputs = cast(list[str], d.pop("inputs"))

        outputs = cast(list[str], d.pop("outputs"))

        parameters = []
        _parameters = d.pop("parameters")
        for parameters_item_data in _parameters:
            parameters_item = AnalysisExperimentsItemParametersItem.from_dict(
                parameters_item_data
            )

            parameters.append(parameters_item)

        required_env_vars = cast(list[str], d.pop("required_env_vars", UNSET))

        analysis_experiments_item = cls(
            id=id,
            title=title,
            description=description,
            entry_point=entry_point,
            command=command,
            language=language,
            kind=kind,
            path=path,
            inputs=inputs,
            outputs=outputs,
            parameters=parameters,
            required_env_vars=required_env_vars,
        )

        analysis_experiments_item.additional_properties = d
        return analysis_experiments_item

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
