from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.analysis import Analysis
from ...models.error import Error
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    repository_id: UUID,
    commit_hash: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/analysis/{commit_hash}".format(
            repository_id=quote(str(repository_id), safe=""),
            commit_hash=quote(str(commit_hash), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Analysis | Error | ValidationError | None:
    if response.status_code == 200:
        response_200 = Analysis.from_dict(response.json())

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
) -> Response[Analysis | Error | ValidationError]:
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
) -> Response[Analysis | Error | ValidationError]:
    """Get a commit's analysis

     `env_vars.missing_env_vars` is computed now, against the environment variables configured for the
    account and repository at this moment.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Analysis | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
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
) -> Analysis | Error | ValidationError | None:
    """Get a commit's analysis

     `env_vars.missing_env_vars` is computed now, against the environment variables configured for the
    account and repository at this moment.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Analysis | Error | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        commit_hash=commit_hash,
        client=client,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
) -> Response[Analysis | Error | ValidationError]:
    """Get a commit's analysis

     `env_vars.missing_env_vars` is computed now, against the environment variables configured for the
    account and repository at this moment.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Analysis | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
) -> Analysis | Error | ValidationError | None:
    """Get a commit's analysis

     `env_vars.missing_env_vars` is computed now, against the environment variables configured for the
    account and repository at this moment.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Analysis | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            commit_hash=commit_hash,
            client=client,
        )
    ).parsed
