from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.repository_commit_author import RepositoryCommitAuthor
    from ..models.repository_commit_committer import RepositoryCommitCommitter


T = TypeVar("T", bound="RepositoryCommit")


@_attrs_define
class RepositoryCommit:
    """
    Attributes:
        commit_hash (str):
        title (str): The message's first line.
        message (str): The whole message, without its final newline; cut after 65,536 characters.
        author (RepositoryCommitAuthor):
        committer (RepositoryCommitCommitter):
        parents (list[str]): The parents' hashes: none for a root commit, two or more for a merge.
    """

    commit_hash: str
    title: str
    message: str
    author: RepositoryCommitAuthor
    committer: RepositoryCommitCommitter
    parents: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        commit_hash = self.commit_hash

        title = self.title

        message = self.message

        author = self.author.to_dict()

        committer = self.committer.to_dict()

        parents = self.parents

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "commit_hash": commit_hash,
                "title": title,
                "message": message,
                "author": author,
                "committer": committer,
                "parents": parents,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.repository_commit_author import RepositoryCommitAuthor
        from ..models.repository_commit_committer import RepositoryCommitCommitter

        d = dict(src_dict)
        commit_hash = d.pop("commit_hash")

        title = d.pop("title")

        message = d.pop("message")

        author = RepositoryCommitAuthor.from_dict(d.pop("author"))

        committer = RepositoryCommitCommitter.from_dict(d.pop("committer"))

        parents = cast(list[str], d.pop("parents"))

        repository_commit = cls(
            commit_hash=commit_hash,
            title=title,
            message=message,
            author=author,
            committer=committer,
            parents=parents,
        )

        repository_commit.additional_properties = d
        return repository_commit

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
