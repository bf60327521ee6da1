from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RunAttempt")


@_attrs_define
class RunAttempt:
    """
    Attributes:
        attempt (int): 1 for the first attempt.
        job_name (str): The attempt's Kubernetes Job (in the Run's namespace).
        created_at (datetime.datetime): When the attempt was recorded (its Job is created right after).
        started_at (datetime.datetime | None): When its command started; null if it never did.
        ended_at (datetime.datetime | None): When it ended; null while it goes on.
        reason (None | str): How it ended: `PodLost`, `PodDisrupted` or `ImagePullFailed` (the infrastructure's: retried
            while retries are left), or the run's own ending (`Completed`, `NonZeroExit`, `TimedOut`, `OOMKilled`,
            `Cancelled`, ...); null while it goes on.
        error (None | str): Why it failed, in words; null unless it failed or was cancelled.
        first_seq (int): Where its lines begin in the run's log: each attempt's lines have seq from here on (below the
            next attempt's `first_seq`); a retried attempt's first line, at exactly this seq, is codeplane's own stderr line
            saying why it started.
    """

    attempt: int
    job_name: str
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    reason: None | str
    error: None | str
    first_seq: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        job_name = self.job_name

        created_at = self.created_at.isoformat()

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        reason: None | str
        reason = self.reason

        error: None | str
        error = self.error

        first_seq = self.first_seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "job_name": job_name,
                "created_at": created_at,
                "started_at": started_at,
                "ended_at": ended_at,
                "reason": reason,
                "error": error,
                "first_seq": first_seq,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        job_name = d.pop("job_name")

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

        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))

        def _parse_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        reason = _parse_reason(d.pop("reason"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        first_seq = d.pop("first_seq")

        run_attempt = cls(
            attempt=attempt,
            job_name=job_name,
            created_at=created_at,
            started_at=started_at,
            ended_at=ended_at,
            reason=reason,
            error=error,
            first_seq=first_seq,
        )

        run_attempt.additional_properties = d
        return run_attempt

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
