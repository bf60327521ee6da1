from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.register_installation_repository import RegisterInstallationRepository
from ...models.repository import Repository
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    integration_id: UUID,
    *,
    body: RegisterInstallationRepository,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/integrations/{integration_id}/repositories".format(
            integration_id=quote(str(integration_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Repository | ValidationError | None:
    if response.status_code == 201:
        response_201 = Repository.from_dict(response.json())

        return response_201

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
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    body: RegisterInstallationRepository,
) -> Response[Error | Repository | ValidationError]:
    """Register a repository the installation can see

     Registers `full_name` as a repository with `provider: "github"` and this `integration_id`: fetched
    once into the mirror with an installation access token minted for the fetch (passed to git in its
    environment, never stored or logged), as every later fetch is. Needs `repositories:write` and
    `integrations:read`. The name is GitHub's, or `<owner>-<name>` when the account has a repository of
    that name already.

    Scope: `repositories:write`.

    Args:
        integration_id (UUID):
        body (RegisterInstallationRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Repository | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    body: RegisterInstallationRepository,
) -> Error | Repository | ValidationError | None:
    """Register a repository the installation can see

     Registers `full_name` as a repository with `provider: "github"` and this `integration_id`: fetched
    once into the mirror with an installation access token minted for the fetch (passed to git in its
    environment, never stored or logged), as every later fetch is. Needs `repositories:write` and
    `integrations:read`. The name is GitHub's, or `<owner>-<name>` when the account has a repository of
    that name already.

    Scope: `repositories:write`.

    Args:
        integration_id (UUID):
        body (RegisterInstallationRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Repository | ValidationError
    """

    return sync_detailed(
        integration_id=integration_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    body: RegisterInstallationRepository,
) -> Response[Error | Repository | ValidationError]:
    """Register a repository the installation can see

     Registers `full_name` as a repository with `provider: "github"` and this `integration_id`: fetched
    once into the mirror with an installation access token minted for the fetch (passed to git in its
    environment, never stored or logged), as every later fetch is. Needs `repositories:write` and
    `integrations:read`. The name is GitHub's, or `<owner>-<name>` when the account has a repository of
    that name already.

    Scope: `repositories:write`.

    Args:
        integration_id (UUID):
        body (RegisterInstallationRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Repository | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    body: RegisterInstallationRepository,
) -> Error | Repository | ValidationError | None:
    """Register a repository the installation can see

     Registers `full_name` as a repository with `provider: "github"` and this `integration_id`: fetched
    once into the mirror with an installation access token minted for the fetch (passed to git in its
    environment, never stored or logged), as every later fetch is. Needs `repositories:write` and
    `integrations:read`. The name is GitHub's, or `<owner>-<name>` when the account has a repository of
    that name already.

    Scope: `repositories:write`.

    Args:
        integration_id (UUID):
        body (RegisterInstallationRepository):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Repository | ValidationError
    """

    return (
        await asyncio_detailed(
            integration_id=integration_id,
            client=client,
            body=body,
        )
    ).parsed
