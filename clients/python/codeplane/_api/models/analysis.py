from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.analysis_language import AnalysisLanguage
from ..models.analysis_status import AnalysisStatus

if TYPE_CHECKING:
    from ..models.analysis_env_vars_type_0 import AnalysisEnvVarsType0
    from ..models.analysis_environment_type_0 import AnalysisEnvironmentType0
    from ..models.analysis_experiments_item import AnalysisExperimentsItem
    from ..models.analysis_repo_summary_type_0 import AnalysisRepoSummaryType0
    from ..models.analysis_trigger import AnalysisTrigger


T = TypeVar("T", bound="Analysis")


@_attrs_define
class Analysis:
    """
    Attributes:
        id (UUID):
        repository_id (UUID):
        commit_hash (str):
        branch (None | str):
        language (AnalysisLanguage):
        status (AnalysisStatus):
        workflow_id (str): namespace/name of the Analysis custom resource.
        created_at (datetime.datetime):
        started_at (datetime.datetime | None):
        completed_at (datetime.datetime | None):
        repo_summary (AnalysisRepoSummaryType0 | None): null until the analysis has completed.
        experiments (list[AnalysisExperimentsItem]): Runnable entry points; empty until the analysis has completed.
        primary_ids (list[str]): The experiments most likely to be what a user wants to run, best first.
        env_vars (AnalysisEnvVarsType0 | None): null until the analysis has completed.
        environment (AnalysisEnvironmentType0 | None): What runs of this commit execute in: the image the catalog gives
            it and what is installed. null until the analysis has completed.
        error (None | str):
        trigger (AnalysisTrigger): What started the analysis. A commit is analysed once: a later trigger of the same
            commit finds this analysis and does not change it.
        logs_url (str): The analysis's log stream (SSE).
    """

    id: UUID
    repository_id: UUID
    commit_hash: str
    branch: None | str
    language: AnalysisLanguage
    status: AnalysisStatus
    workflow_id: str
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    completed_at: datetime.datetime | None
    repo_summary: AnalysisRepoSummaryType0 | None
    experiments: list[AnalysisExperimentsItem]
    primary_ids: list[str]
    env_vars: AnalysisEnvVarsType0 | None
    environment: AnalysisEnvironmentType0 | None
    error: None | str
    trigger: AnalysisTrigger
    logs_url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.analysis_env_vars_type_0 import AnalysisEnvVarsType0
        from ..models.analysis_environment_type_0 import AnalysisEnvironmentType0
        from ..models.analysis_repo_summary_type_0 import AnalysisRepoSummaryType0

        id = str(self.id)

        repository_id = str(self.repository_id)

        commit_hash = self.commit_hash

        branch: None | str
        branch = self.branch

        language = self.language.value

        status = self.status.value

        workflow_id = self.workflow_id

        created_at = self.created_at.isoformat()

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        repo_summary: dict[str, Any] | None
        if isinstance(self.repo_summary, AnalysisRepoSummaryType0):
            repo_summary = self.repo_summary.to_dict()
        else:
            repo_summary = self.repo_summary

        experiments = []
        for experiments_item_data in self.experiments:
            experiments_item = experiments_item_data.to_dict()
            experiments.append(experiments_item)

        primary_ids = self.primary_ids

        env_vars: dict[str, Any] | None
        if isinstance(self.env_vars, AnalysisEnvVarsType0):
            env_vars = self.env_vars.to_dict()
        else:
            env_vars = self.env_vars

        environment: dict[str, Any] | None
        if isinstance(self.environment, AnalysisEnvironmentType0):
            environment = self.environment.to_dict()
        else:
            environment = self.environment

        error: None | str
        error = self.error

        trigger = self.trigger.to_dict()

        logs_url = self.logs_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "repository_id": repository_id,
                "commit_hash": commit_hash,
                "branch": branch,
                "language": language,
                "status": status,
                "workflow_id": workflow_id,
                "created_at": created_at,
                "started_at": started_at,
                "completed_at": completed_at,
                "repo_summary": repo_summary,
                "experiments": experiments,
                "primary_ids": primary_ids,
                "env_vars": env_vars,
                "environment": environment,
                "error": error,
                "trigger": trigger,
                "logs_url": logs_url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.analysis_env_vars_type_0 import AnalysisEnvVarsType0
        from ..models.analysis_environment_type_0 import AnalysisEnvironmentType0
        from ..models.analysis_experiments_item import AnalysisExperimentsItem
        from ..models.analysis_repo_summary_type_0 import AnalysisRepoSummaryType0
        from ..models.analysis_trigger import AnalysisTrigger

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        repository_id = UUID(d.pop("repository_id"))

        commit_hash = d.pop("commit_hash")

        def _parse_branch(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        branch = _parse_branch(d.pop("branch"))

        language = AnalysisLanguage(d.pop("language"))

        status = AnalysisStatus(d.pop("status"))

        workflow_id = d.pop("workflow_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)

                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))

        def _parse_repo_summary(data: object) -> AnalysisRepoSummaryType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                repo_summary_type_0 = AnalysisRepoSummaryType0.from_dict(data)

                return repo_summary_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnalysisRepoSummaryType0 | None, data)

        repo_summary = _parse_repo_summary(d.pop("repo_summary"))

        experiments = []
        _experiments = d.pop("experiments")
        for experiments_item_data in _experiments:
            experiments_item = AnalysisExperimentsItem.from_dict(experiments_item_data)

            experiments.append(experiments_item)

        primary_ids = cast(list[str], d.pop("primary_ids"))

        def _parse_env_vars(data: object) -> AnalysisEnvVarsType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                env_vars_type_0 = AnalysisEnvVarsType0.from_dict(data)

                return env_vars_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnalysisEnvVarsType0 | None, data)

        env_vars = _parse_env_vars(d.pop("env_vars"))

        def _parse_environment(data: object) -> AnalysisEnvironmentType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                environment_type_0 = AnalysisEnvironmentType0.from_dict(data)

                return environment_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnalysisEnvironmentType0 | None, data)

        environment = _parse_environment(d.pop("environment"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        trigger = AnalysisTrigger.from_dict(d.pop("trigger"))

        logs_url = d.pop("logs_url")

        analysis = cls(
            id=id,
            repository_id=repository_id,
            commit_hash=commit_hash,
            branch=branch,
            language=language,
            status=status,
            workflow_id=workflow_id,
            created_at=created_at,
            started_at=started_at,
            completed_at=completed_at,
            repo_summary=repo_summary,
            experiments=experiments,
            primary_ids=primary_ids,
            env_vars=env_vars,
            environment=environment,
            error=error,
            trigger=trigger,
            logs_url=logs_url,
        )

        analysis.additional_properties = d
        return analysis

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
