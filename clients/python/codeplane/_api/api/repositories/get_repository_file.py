from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.repository_file import RepositoryFile
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    repository_id: UUID,
    path: str,
    *,
    ref: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["ref"] = ref

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/files/{path}".format(
            repository_id=quote(str(repository_id), safe=""),
            path=quote(str(path), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RepositoryFile | ValidationError | None:
    if response.status_code == 200:
        response_200 = RepositoryFile.from_dict(response.json())

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
) -> Response[Error | RepositoryFile | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    repository_id: UUID,
    path: str,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
) -> Response[Error | RepositoryFile | ValidationError]:
    """Read a file

     UTF-8 text comes back as is; anything else base64. Content beyond the configured maximum is cut (on
    a character boundary) with `truncated: true`; `size` is always the full size. A symlink returns its
    target.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        path (str):
        ref (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryFile | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        path=path,
        ref=ref,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    path: str,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
) -> Error | RepositoryFile | ValidationError | None:
    """Read a file

     UTF-8 text comes back as is; anything else base64. Content beyond the configured maximum is cut (on
    a character boundary) with `truncated: true`; `size` is always the full size. A symlink returns its
    target.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        path (str):
        ref (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryFile | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        path=path,
        client=client,
        ref=ref,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    path: str,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
) -> Response[Error | RepositoryFile | ValidationError]:
    """Read a file

     UTF-8 text comes back as is; anything else base64. Content beyond the configured maximum is cut (on
    a character boundary) with `truncated: true`; `size` is always the full size. A symlink returns its
    target.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        path (str):
        ref (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RepositoryFile | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        path=path,
        ref=ref,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    path: str,
    *,
    client: AuthenticatedClient,
    ref: str | Unset = UNSET,
) -> Error | RepositoryFile | ValidationError | None:
    """Read a file

     UTF-8 text comes back as is; anything else base64. Content beyond the configured maximum is cut (on
    a character boundary) with `truncated: true`; `size` is always the full size. A symlink returns its
    target.

    Scope: `repositories:read`.

    Args:
        repository_id (UUID):
        path (str):
        ref (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RepositoryFile | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            path=path,
            client=client,
            ref=ref,
        )
    ).parsed
