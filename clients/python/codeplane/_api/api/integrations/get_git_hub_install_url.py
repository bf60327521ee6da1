from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.git_hub_install_url import GitHubInstallUrl
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/integrations/github/install",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | GitHubInstallUrl | ValidationError | None:
    if response.status_code == 200:
        response_200 = GitHubInstallUrl.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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
) -> Response[Error | GitHubInstallUrl | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[Error | GitHubInstallUrl | ValidationError]:
    """Get the GitHub App's installation URL

     `{web_url}/apps/{slug}/installations/new?state=...`, built without calling GitHub. `state` is signed
    by this server (HMAC-SHA-256 under a key derived from its encryption key), bound to this account and
    valid for one hour: the callback connects the installation to the account that asked for the URL.

    Scope: `integrations:write`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GitHubInstallUrl | ValidationError]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
) -> Error | GitHubInstallUrl | ValidationError | None:
    """Get the GitHub App's installation URL

     `{web_url}/apps/{slug}/installations/new?state=...`, built without calling GitHub. `state` is signed
    by this server (HMAC-SHA-256 under a key derived from its encryption key), bound to this account and
    valid for one hour: the callback connects the installation to the account that asked for the URL.

    Scope: `integrations:write`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GitHubInstallUrl | ValidationError
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[Error | GitHubInstallUrl | ValidationError]:
    """Get the GitHub App's installation URL

     `{web_url}/apps/{slug}/installations/new?state=...`, built without calling GitHub. `state` is signed
    by this server (HMAC-SHA-256 under a key derived from its encryption key), bound to this account and
    valid for one hour: the callback connects the installation to the account that asked for the URL.

    Scope: `integrations:write`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GitHubInstallUrl | ValidationError]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
) -> Error | GitHubInstallUrl | ValidationError | None:
    """Get the GitHub App's installation URL

     `{web_url}/apps/{slug}/installations/new?state=...`, built without calling GitHub. `state` is signed
    by this server (HMAC-SHA-256 under a key derived from its encryption key), bound to this account and
    valid for one hour: the callback connects the installation to the account that asked for the URL.

    Scope: `integrations:write`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GitHubInstallUrl | ValidationError
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
