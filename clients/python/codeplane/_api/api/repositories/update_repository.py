from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.repository import Repository
from ...models.update_repository import UpdateRepository
from ...models.validation_error import ValidationError
from ...types import UNSET, Response


def _get_kwargs(
    repository_id: UUID,
    *,
    body: UpdateRepository | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/repositories/{repository_id}".format(
            repository_id=quote(str(repository_id), safe=""),
        ),
    }

    if isinstance(body, UpdateRepository):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/json"
    if isinstance(body, UpdateRepository):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/merge-patch+json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Repository | ValidationError | None:
    if response.status_code == 200:
        response_200 = Repository.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

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
) -> Response[Error | Repository | ValidationError]:
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
    body: UpdateRepository | Unset = UNSET,
) -> Response[Error | Repository | ValidationError]:
    """Update a repository

     Changes its name, default branch, automatic analysis or check-run reporting (`report_check_runs`:
    each run created afterwards reports a check run on its commit through the repository's GitHub App
    installation); fields left out keep their value.

    Scope: `repositories:write`.

    Args:
        repository_id (UUID):
        body (UpdateRepository):
        body (UpdateRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Repository | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateRepository | Unset = UNSET,
) -> Error | Repository | ValidationError | None:
    """Update a repository

     Changes its name, default branch, automatic analysis or check-run reporting (`report_check_runs`:
    each run created afterwards reports a check run on its commit through the repository's GitHub App
    installation); fields left out keep their value.

    Scope: `repositories:write`.

    Args:
        repository_id (UUID):
        body (UpdateRepository):
        body (UpdateRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Repository | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateRepository | Unset = UNSET,
) -> Response[Error | Repository | ValidationError]:
    """Update a repository

     Changes its name, default branch, automatic analysis or check-run reporting (`report_check_runs`:
    each run created afterwards reports a check run on its commit through the repository's GitHub App
    installation); fields left out keep their value.

    Scope: `repositories:write`.

    Args:
        repository_id (UUID):
        body (UpdateRepository):
        body (UpdateRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Repository | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateRepository | Unset = UNSET,
) -> Error | Repository | ValidationError | None:
    """Update a repository

     Changes its name, default branch, automatic analysis or check-run reporting (`report_check_runs`:
    each run created afterwards reports a check run on its commit through the repository's GitHub App
    installation); fields left out keep their value.

    Scope: `repositories:write`.

    Args:
        repository_id (UUID):
        body (UpdateRepository):
        body (UpdateRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Repository | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            client=client,
            body=body,
        )
    ).parsed
