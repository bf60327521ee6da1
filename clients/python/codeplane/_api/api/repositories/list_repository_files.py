from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.repository_tree import RepositoryTree
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    repository_id: UUID,
    *,
    ref: str | Unset = UNSET,
    path: str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["ref"] = ref

    params["path"] = path

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/files".format(
            repository_id=quote(str(repository_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RepositoryTree | ValidationError | None:
    if response.status_code == 200:
        response_200 = RepositoryTree.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

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
) -> Response[Error | RepositoryTree | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
    path: str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Response[Error | RepositoryTree | ValidationError]:
    """List a directory

     `ref` is a branch, tag or commit hash (default: the default branch); `path` is a directory (default:
    the root). Directories come first, then files, symlinks and submodules, each group in byte order of
    the name. Paginated: at most `limit` entries (1 to 1000, default 1000) and a `next_cursor` for the
    rest, which pins the commit the first page read, so every page of one listing shows the same commit
    even if the branch moves meanwhile.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str | Unset):
        path (str | Unset):
        limit (int | Unset): Entries per page, 1 to 1000 (default 1000). Default: 1000.
        cursor (str | Unset): The previous page's `next_cursor`; the listing continues at the
            commit the first page read (`ref` is then ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryTree | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        ref=ref,
        path=path,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
    path: str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Error | RepositoryTree | ValidationError | None:
    """List a directory

     `ref` is a branch, tag or commit hash (default: the default branch); `path` is a directory (default:
    the root). Directories come first, then files, symlinks and submodules, each group in byte order of
    the name. Paginated: at most `limit` entries (1 to 1000, default 1000) and a `next_cursor` for the
    rest, which pins the commit the first page read, so every page of one listing shows the same commit
    even if the branch moves meanwhile.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str | Unset):
        path (str | Unset):
        limit (int | Unset): Entries per page, 1 to 1000 (default 1000). Default: 1000.
        cursor (str | Unset): The previous page's `next_cursor`; the listing continues at the
            commit the first page read (`ref` is then ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryTree | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        client=client,
        ref=ref,
        path=path,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
    path: str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Response[Error | RepositoryTree | ValidationError]:
    """List a directory

     `ref` is a branch, tag or commit hash (default: the default branch); `path` is a directory (default:
    the root). Directories come first, then files, symlinks and submodules, each group in byte order of
    the name. Paginated: at most `limit` entries (1 to 1000, default 1000) and a `next_cursor` for the
    rest, which pins the commit the first page read, so every page of one listing shows the same commit
    even if the branch moves meanwhile.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str | Unset):
        path (str | Unset):
        limit (int | Unset): Entries per page, 1 to 1000 (default 1000). Default: 1000.
        cursor (str | Unset): The previous page's `next_cursor`; the listing continues at the
            commit the first page read (`ref` is then ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryTree | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        ref=ref,
        path=path,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
    path: str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Error | RepositoryTree | ValidationError | None:
    """List a directory

     `ref` is a branch, tag or commit hash (default: the default branch); `path` is a directory (default:
    the root). Directories come first, then files, symlinks and submodules, each group in byte order of
    the name. Paginated: at most `limit` entries (1 to 1000, default 1000) and a `next_cursor` for the
    rest, which pins the commit the first page read, so every page of one listing shows the same commit
    even if the branch moves meanwhile.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        ref (str | Unset):
        path (str | Unset):
        limit (int | Unset): Entries per page, 1 to 1000 (default 1000). Default: 1000.
        cursor (str | Unset): The previous page's `next_cursor`; the listing continues at the
            commit the first page read (`ref` is then ignored).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryTree | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            client=client,
            ref=ref,
            path=path,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
