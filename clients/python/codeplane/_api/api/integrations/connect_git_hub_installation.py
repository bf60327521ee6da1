from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.connect_git_hub_installation import ConnectGitHubInstallation
from ...models.error import Error
from ...models.integration import Integration
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    *,
    body: ConnectGitHubInstallation,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/integrations/github",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Integration | ValidationError | None:
    if response.status_code == 200:
        response_200 = Integration.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = Integration.from_dict(response.json())

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
) -> Response[Error | Integration | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ConnectGitHubInstallation,
) -> Response[Error | Integration | ValidationError]:
    """Connect a GitHub App installation

     The callback's work without a browser: the installation must be one this App can see (checked
    through GitHub's API) and not connected to another codeplane account. Connecting an installation
    this account has already answers 200 with it (its details refreshed from GitHub).

    Scope: `integrations:write`.

    Args:
        body (ConnectGitHubInstallation):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Integration | ValidationError]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ConnectGitHubInstallation,
) -> Error | Integration | ValidationError | None:
    """Connect a GitHub App installation

     The callback's work without a browser: the installation must be one this App can see (checked
    through GitHub's API) and not connected to another codeplane account. Connecting an installation
    this account has already answers 200 with it (its details refreshed from GitHub).

    Scope: `integrations:write`.

    Args:
        body (ConnectGitHubInstallation):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Integration | ValidationError
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ConnectGitHubInstallation,
) -> Response[Error | Integration | ValidationError]:
    """Connect a GitHub App installation

     The callback's work without a browser: the installation must be one this App can see (checked
    through GitHub's API) and not connected to another codeplane account. Connecting an installation
    this account has already answers 200 with it (its details refreshed from GitHub).

    Scope: `integrations:write`.

    Args:
        body (ConnectGitHubInstallation):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Integration | ValidationError]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ConnectGitHubInstallation,
) -> Error | Integration | ValidationError | None:
    """Connect a GitHub App installation

     The callback's work without a browser: the installation must be one this App can see (checked
    through GitHub's API) and not connected to another codeplane account. Connecting an installation
    this account has already answers 200 with it (its details refreshed from GitHub).

    Scope: `integrations:write`.

    Args:
        body (ConnectGitHubInstallation):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Integration | ValidationError
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
