from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.installation_repository_page import InstallationRepositoryPage
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    integration_id: UUID,
    *,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/integrations/{integration_id}/repositories".format(
            integration_id=quote(str(integration_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | InstallationRepositoryPage | ValidationError | None:
    if response.status_code == 200:
        response_200 = InstallationRepositoryPage.from_dict(response.json())

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
) -> Response[Error | InstallationRepositoryPage | ValidationError]:
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
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | InstallationRepositoryPage | ValidationError]:
    """List what the installation can see

     The repositories GitHub lets the installation see, a page of GitHub's list at a time (in GitHub's
    order, not newest first), each with the codeplane repository registered from it, if any.

    Scope: `integrations:read`.

    Args:
        integration_id (UUID):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The previous page's `next_cursor` (an opaque token holding GitHub's
            page; its page size wins over `limit`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | InstallationRepositoryPage | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | InstallationRepositoryPage | ValidationError | None:
    """List what the installation can see

     The repositories GitHub lets the installation see, a page of GitHub's list at a time (in GitHub's
    order, not newest first), each with the codeplane repository registered from it, if any.

    Scope: `integrations:read`.

    Args:
        integration_id (UUID):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The previous page's `next_cursor` (an opaque token holding GitHub's
            page; its page size wins over `limit`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | InstallationRepositoryPage | ValidationError
    """

    return sync_detailed(
        integration_id=integration_id,
        client=client,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | InstallationRepositoryPage | ValidationError]:
    """List what the installation can see

     The repositories GitHub lets the installation see, a page of GitHub's list at a time (in GitHub's
    order, not newest first), each with the codeplane repository registered from it, if any.

    Scope: `integrations:read`.

    Args:
        integration_id (UUID):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The previous page's `next_cursor` (an opaque token holding GitHub's
            page; its page size wins over `limit`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | InstallationRepositoryPage | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | InstallationRepositoryPage | ValidationError | None:
    """List what the installation can see

     The repositories GitHub lets the installation see, a page of GitHub's list at a time (in GitHub's
    order, not newest first), each with the codeplane repository registered from it, if any.

    Scope: `integrations:read`.

    Args:
        integration_id (UUID):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The previous page's `next_cursor` (an opaque token holding GitHub's
            page; its page size wins over `limit`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | InstallationRepositoryPage | ValidationError
    """

    return (
        await asyncio_detailed(
            integration_id=integration_id,
            client=client,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
