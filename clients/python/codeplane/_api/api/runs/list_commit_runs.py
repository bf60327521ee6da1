from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.list_commit_runs_status import ListCommitRunsStatus
from ...models.run_page import RunPage
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    repository_id: UUID,
    commit_hash: str,
    *,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
    status: ListCommitRunsStatus | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/{commit_hash}/runs".format(
            repository_id=quote(str(repository_id), safe=""),
            commit_hash=quote(str(commit_hash), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RunPage | ValidationError | None:
    if response.status_code == 200:
        response_200 = RunPage.from_dict(response.json())

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
) -> Response[Error | RunPage | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
    status: ListCommitRunsStatus | Unset = UNSET,
) -> Response[Error | RunPage | ValidationError]:
    """List a commit's runs

     The runs of one commit of a repository, newest first, optionally filtered by status.

    Scope: `runs:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).
        status (ListCommitRunsStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunPage | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        limit=limit,
        cursor=cursor,
        status=status,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
    status: ListCommitRunsStatus | Unset = UNSET,
) -> Error | RunPage | ValidationError | None:
    """List a commit's runs

     The runs of one commit of a repository, newest first, optionally filtered by status.

    Scope: `runs:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).
        status (ListCommitRunsStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunPage | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        commit_hash=commit_hash,
        client=client,
        limit=limit,
        cursor=cursor,
        status=status,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
    status: ListCommitRunsStatus | Unset = UNSET,
) -> Response[Error | RunPage | ValidationError]:
    """List a commit's runs

     The runs of one commit of a repository, newest first, optionally filtered by status.

    Scope: `runs:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).
        status (ListCommitRunsStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunPage | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        limit=limit,
        cursor=cursor,
        status=status,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
    status: ListCommitRunsStatus | Unset = UNSET,
) -> Error | RunPage | ValidationError | None:
    """List a commit's runs

     The runs of one commit of a repository, newest first, optionally filtered by status.

    Scope: `runs:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).
        status (ListCommitRunsStatus | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunPage | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            commit_hash=commit_hash,
            client=client,
            limit=limit,
            cursor=cursor,
            status=status,
        )
    ).parsed
