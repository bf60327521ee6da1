from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RunQueueType0")


@_attrs_define
class RunQueueType0:
    """Set while the run waits for admission; null otherwise. Usually the run is `pending` (its Job is not created yet, or
    with Kueue is suspended in its queue). With Kueue a run may wait in another phase: one whose environment was built
    waits in `preprocessing`, and a retried run's next attempt goes through Kueue again while the run stays `running`.
    Queued runs are admitted round-robin across accounts (with Kueue: Kueue's fair sharing) and in submission order
    within one; one can be cancelled or deleted, and a cancelled one never starts.

        Attributes:
            position (int): Its place among the account's queued runs, in submission order (1: admitted next for this
                account). With Kueue too: codeplane hands Kueue one run per account at a time, oldest first, so this is the
                order Kueue admits the account's runs in (Kueue's own positions are not read).
            reason (str): Without Kueue: `AccountConcurrency` (the account has its limit of runs and analyses executing),
                `AccountQuota` (this run's compute type's CPU or memory requests would take the account over its cap of requests
                at once) or `ClusterConcurrency` (the installation has its limit, and accounts take turns). With Kueue admitting
                runs: `ClusterQuota` (the ClusterQueue's quota is in use; accounts take turns), `KueuePending` (Kueue has not
                taken it in yet), `KueueInadmissible` (Kueue cannot admit it as things are, e.g. it asks for more than the
                quota) or `KueueAdmitting` (quota reserved, admission under way).
    """

    position: int
    reason: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        position = self.position

        reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "position": position,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        position = d.pop("position")

        reason = d.pop("reason")

        run_queue_type_0 = cls(
            position=position,
            reason=reason,
        )

        run_queue_type_0.additional_properties = d
        return run_queue_type_0

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
