from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.repository_commit import RepositoryCommit
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    repository_id: UUID,
    ref: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/commits/{ref}".format(
            repository_id=quote(str(repository_id), safe=""),
            ref=quote(str(ref), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RepositoryCommit | ValidationError | None:
    if response.status_code == 200:
        response_200 = RepositoryCommit.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = ValidationError.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | RepositoryCommit | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    repository_id: UUID,
    ref: str,
    *,
    client: AuthenticatedClient,
) -> Response[Error | RepositoryCommit | ValidationError]:
    """Read a commit

     The commit `ref` names (a branch, tag, full or short commit hash): its hash, its message (and the
    message's first line, `title`), its author and committer with their dates, and its parents. An
    unknown ref makes one fetch of the repository (at most every few seconds) before it is a 404.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryCommit | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        ref=ref,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    ref: str,
    *,
    client: AuthenticatedClient,
) -> Error | RepositoryCommit | ValidationError | None:
    """Read a commit

     The commit `ref` names (a branch, tag, full or short commit hash): its hash, its message (and the
    message's first line, `title`), its author and committer with their dates, and its parents. An
    unknown ref makes one fetch of the repository (at most every few seconds) before it is a 404.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryCommit | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        ref=ref,
        client=client,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    ref: str,
    *,
    client: AuthenticatedClient,
) -> Response[Error | RepositoryCommit | ValidationError]:
    """Read a commit

     The commit `ref` names (a branch, tag, full or short commit hash): its hash, its message (and the
    message's first line, `title`), its author and committer with their dates, and its parents. An
    unknown ref makes one fetch of the repository (at most every few seconds) before it is a 404.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryCommit | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        ref=ref,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    ref: str,
    *,
    client: AuthenticatedClient,
) -> Error | RepositoryCommit | ValidationError | None:
    """Read a commit

     The commit `ref` names (a branch, tag, full or short commit hash): its hash, its message (and the
    message's first line, `title`), its author and committer with their dates, and its parents. An
    unknown ref makes one fetch of the repository (at most every few seconds) before it is a 404.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryCommit | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            ref=ref,
            client=client,
        )
    ).parsed
