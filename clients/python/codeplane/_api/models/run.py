from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_status import RunStatus

if TYPE_CHECKING:
    from ..models.run_attempt import RunAttempt
    from ..models.run_environment_type_0 import RunEnvironmentType0
    from ..models.run_final_metrics import RunFinalMetrics
    from ..models.run_parameters import RunParameters
    from ..models.run_queue_type_0 import RunQueueType0
    from ..models.run_run_config import RunRunConfig
    from ..models.run_timeline_item import RunTimelineItem


T = TypeVar("T", bound="Run")


@_attrs_define
class Run:
    """
    Attributes:
        run_id (UUID):
        workflow_id (str): namespace/name of the Run custom resource.
        repository_id (UUID):
        commit_hash (str):
        status (RunStatus):
        experiment_id (None | str):
        compute_type (str):
        run_config (RunRunConfig):
        attempts (list[RunAttempt]): Each attempt at the run, oldest first (their number is its length): one per Job. A
            run that lost its pod to the infrastructure with retries left has a second one, and so on. Empty until the run's
            first Job is made.
        environment (None | RunEnvironmentType0): The environment the run executes in; null: the runner image, nothing
            installed.
        parameters (RunParameters): The experiment's parameter values the run used (as in `run_config.parameters`),
            beside `final_metrics` for comparing runs.
        final_metrics (RunFinalMetrics): Each metric series' final value (the point at its highest step): `GET
            /v1/runs/{run_id}/metrics` has the series. `{}` until the run reports one.
        rerun_of (None | UUID): The run this one repeats (`POST /v1/runs/{run_id}/rerun`); null for a run started
            directly.
        exit_code (int | None):
        error (None | str): Why it failed or was cancelled, in words; null otherwise. A queued run whose compute type
            requests more CPU or memory than its account's cap by itself (the cap was lowered while it waited) fails without
            starting, and this names the limit and its value: `compute type 'cpu-memory' requests 1Gi memory, more than this
            account's cap of 512Mi (limit 'memory' per account): a run of it could never start, ...`.
        stdout_url (str):
        stderr_url (str):
        duration_seconds (float | None):
        start_time (datetime.datetime | None):
        close_time (datetime.datetime | None):
        created_at (datetime.datetime):
        timeline (list[RunTimelineItem]): What the run went through so far, in this order: `created`, `admitted` (its
            Job started; for a run on a warm pool's pod, with `warm: true` and `pool`, when it claimed the pod), `scheduled`
            (its pod was bound to a node), `image_ready` (the pod's first container started; a warm run has neither: its pod
            had both before the run existed), `checked_out`, `environment_ready`, `started` (the command), `first_output`,
            `ended`. Only steps that happened are listed; times from the cluster have whole seconds. A `preprocessing` run
            with an environment key, no `cache` yet and no `admitted` is waiting for its environment's build.
        queue (None | RunQueueType0): Set while the run waits for admission; null otherwise. Usually the run is
            `pending` (its Job is not created yet, or with Kueue is suspended in its queue). With Kueue a run may wait in
            another phase: one whose environment was built waits in `preprocessing`, and a retried run's next attempt goes
            through Kueue again while the run stays `running`. Queued runs are admitted round-robin across accounts (with
            Kueue: Kueue's fair sharing) and in submission order within one; one can be cancelled or deleted, and a
            cancelled one never starts.
    """

    run_id: UUID
    workflow_id: str
    repository_id: UUID
    commit_hash: str
    status: RunStatus
    experiment_id: None | str
    compute_type: str
    run_config: RunRunConfig
    attempts: list[RunAttempt]
    environment: None | RunEnvironmentType0
    parameters: RunParameters
    final_metrics: RunFinalMetrics
    rerun_of: None | UUID
    exit_code: int | None
    error: None | str
    stdout_url: str
    stderr_url: str
    duration_seconds: float | None
    start_time: datetime.datetime | None
    close_time: datetime.datetime | None
    created_at: datetime.datetime
    timeline: list[RunTimelineItem]
    queue: None | RunQueueType0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_environment_type_0 import RunEnvironmentType0
        from ..models.run_queue_type_0 import RunQueueType0

        run_id = str(self.run_id)

        workflow_id = self.workflow_id

        repository_id = str(self.repository_id)

        commit_hash = self.commit_hash

        status = self.status.value

        experiment_id: None | str
        experiment_id = self.experiment_id

        compute_type = self.compute_type

        run_config = self.run_config.to_dict()

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)

        environment: dict[str, Any] | None
        if isinstance(self.environment, RunEnvironmentType0):
            environment = self.environment.to_dict()
        else:
            environment = self.environment

        parameters = self.parameters.to_dict()

        final_metrics = self.final_metrics.to_dict()

        rerun_of: None | str
        if isinstance(self.rerun_of, UUID):
            rerun_of = str(self.rerun_of)
        else:
            rerun_of = self.rerun_of

        exit_code: int | None
        exit_code = self.exit_code

        error: None | str
        error = self.error

        stdout_url = self.stdout_url

        stderr_url = self.stderr_url

        duration_seconds: float | None
        duration_seconds = self.duration_seconds

        start_time: None | str
        if isinstance(self.start_time, datetime.datetime):
            start_time = self.start_time.isoformat()
        else:
            start_time = self.start_time

        close_time: None | str
        if isinstance(self.close_time, datetime.datetime):
            close_time = self.close_time.isoformat()
        else:
            close_time = self.close_time

        created_at = self.created_at.isoformat()

        timeline = []
        for timeline_item_data in self.timeline:
            timeline_item = timeline_item_data.to_dict()
            timeline.append(timeline_item)

        queue: dict[str, Any] | None
        if isinstance(self.queue, RunQueueType0):
            queue = self.queue.to_dict()
        else:
            queue = self.queue

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "workflow_id": workflow_id,
                "repository_id": repository_id,
                "commit_hash": commit_hash,
                "status": status,
                "experiment_id": experiment_id,
                "compute_type": compute_type,
                "run_config": run_config,
                "attempts": attempts,
                "environment": environment,
                "parameters": parameters,
                "final_metrics": final_metrics,
                "rerun_of": rerun_of,
                "exit_code": exit_code,
                "error": error,
                "stdout_url": stdout_url,
                "stderr_url": stderr_url,
                "duration_seconds": duration_seconds,
                "start_time": start_time,
                "close_time": close_time,
                "created_at": created_at,
                "timeline": timeline,
                "queue": queue,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_attempt import RunAttempt
        from ..models.run_environment_type_0 import RunEnvironmentType0
        from ..models.run_final_metrics import RunFinalMetrics
        from ..models.run_parameters import RunParameters
        from ..models.run_queue_type_0 import RunQueueType0
        from ..models.run_run_config import RunRunConfig
        from ..models.run_timeline_item import RunTimelineItem

        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        workflow_id = d.pop("workflow_id")

        repository_id = UUID(d.pop("repository_id"))

        commit_hash = d.pop("commit_hash")

        status = RunStatus(d.pop("status"))

        def _parse_experiment_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        experiment_id = _parse_experiment_id(d.pop("experiment_id"))

        compute_type = d.pop("compute_type")

        run_config = RunRunConfig.from_dict(d.pop("run_config"))

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in _attempts:
            attempts_item = RunAttempt.from_dict(attempts_item_data)

            attempts.append(attempts_item)

        def _parse_environment(data: object) -> None | RunEnvironmentType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                environment_type_0 = RunEnvironmentType0.from_dict(data)

                return environment_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunEnvironmentType0, data)

        environment = _parse_environment(d.pop("environment"))

        parameters = RunParameters.from_dict(d.pop("parameters"))

        final_metrics = RunFinalMetrics.from_dict(d.pop("final_metrics"))

        def _parse_rerun_of(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                rerun_of_type_0 = UUID(data)

                return rerun_of_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        rerun_of = _parse_rerun_of(d.pop("rerun_of"))

        def _parse_exit_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        exit_code = _parse_exit_code(d.pop("exit_code"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        stdout_url = d.pop("stdout_url")

        stderr_url = d.pop("stderr_url")

        def _parse_duration_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))

        def _parse_start_time(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                start_time_type_0 = datetime.datetime.fromisoformat(data)

                return start_time_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        start_time = _parse_start_time(d.pop("start_time"))

        def _parse_close_time(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                close_time_type_0 = datetime.datetime.fromisoformat(data)

                return close_time_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        close_time = _parse_close_time(d.pop("close_time"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        timeline = []
        _timeline = d.pop("timeline")
        for timeline_item_data in _timeline:
            timeline_item = RunTimelineItem.from_dict(timeline_item_data)

            timeline.append(timeline_item)

        def _parse_queue(data: object) -> None | RunQueueType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                queue_type_0 = RunQueueType0.from_dict(data)

                return queue_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunQueueType0, data)

        queue = _parse_queue(d.pop("queue"))

        run = cls(
            run_id=run_id,
            workflow_id=workflow_id,
            repository_id=repository_id,
            commit_hash=commit_hash,
            status=status,
            experiment_id=experiment_id,
            compute_type=compute_type,
            run_config=run_config,
            attempts=attempts,
            environment=environment,
            parameters=parameters,
            final_metrics=final_metrics,
            rerun_of=rerun_of,
            exit_code=exit_code,
            error=error,
            stdout_url=stdout_url,
            stderr_url=stderr_url,
            duration_seconds=duration_seconds,
            start_time=start_time,
            close_time=close_time,
            created_at=created_at,
            timeline=timeline,
            queue=queue,
        )

        run.additional_properties = d
        return run

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
