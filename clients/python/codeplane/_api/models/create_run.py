from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.create_run_environment import CreateRunEnvironment
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_run_parameters import CreateRunParameters


T = TypeVar("T", bound="CreateRun")


@_attrs_define
class CreateRun:
    """
    Attributes:
        analyzed_experiment (str | Unset): An experiment id from this commit's completed analysis. Refused (422) while
            one of that experiment's own `required_env_vars` is not configured; other experiments' variables do not matter.
        parameters (CreateRunParameters | Unset): Overrides of the experiment's parameter defaults.
        command (list[str] | Unset): argv to run in the checkout (no shell: use ["sh", "-c", "..."] for one).
        compute_type (str | Unset): A named preset; default cpu-general.
        timeout_seconds (int | Unset): Default and maximum are set by the operator.
        retries (int | Unset): How many times to start the run again when the infrastructure loses it (its pod evicted,
            deleted or preempted, its node lost, its image not pulled); 0..5, default 0. The command's own failure (a non-
            zero exit, out of memory, a timeout) and a cancel are never retried. Each attempt is a Job of its own with the
            whole `timeout_seconds`; `attempts` on the run records them.
        environment (CreateRunEnvironment | Unset): `auto` (the default): the environment the commit's analysis found,
            in the catalog image that fits it, with its dependencies installed once per key and restored; `none`: the runner
            image as it is, nothing installed.
    """

    analyzed_experiment: str | Unset = UNSET
    parameters: CreateRunParameters | Unset = UNSET
    command: list[str] | Unset = UNSET
    compute_type: str | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    retries: int | Unset = UNSET
    environment: CreateRunEnvironment | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        analyzed_experiment = self.analyzed_experiment

        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        compute_type = self.compute_type

        timeout_seconds = self.timeout_seconds

        retries = self.retries

        environment: str | Unset = UNSET
        if not isinstance(self.environment, Unset):
            environment = self.environment.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if analyzed_experiment is not UNSET:
            field_dict["analyzed_experiment"] = analyzed_experiment
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if command is not UNSET:
            field_dict["command"] = command
        if compute_type is not UNSET:
            field_dict["compute_type"] = compute_type
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
        if retries is not UNSET:
            field_dict["retries"] = retries
        if environment is not UNSET:
            field_dict["environment"] = environment

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.create_run_parameters import CreateRunParameters

        d = dict(src_dict)
        analyzed_experiment = d.pop("analyzed_experiment", UNSET)

        _parameters = d.pop("parameters", UNSET)
        parameters: CreateRunParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = CreateRunParameters.from_dict(_parameters)

        command = cast(list[str], d.pop("command", UNSET))

        compute_type = d.pop("compute_type", UNSET)

        timeout_seconds = d.pop("timeout_seconds", UNSET)

        retries = d.pop("retries", UNSET)

        _environment = d.pop("environment", UNSET)
        environment: CreateRunEnvironment | Unset
        if isinstance(_environment, Unset):
            environment = UNSET
        else:
            environment = CreateRunEnvironment(_environment)

        create_run = cls(
            analyzed_experiment=analyzed_experiment,
            parameters=parameters,
            command=command,
            compute_type=compute_type,
            timeout_seconds=timeout_seconds,
            retries=retries,
            environment=environment,
        )

        return create_run
