from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    integration_id: UUID,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/integrations/{integration_id}".format(
            integration_id=quote(str(integration_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | ValidationError | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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
) -> Response[Any | Error | ValidationError]:
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
) -> Response[Any | Error | ValidationError]:
    """Disconnect an integration

     Disconnects the installation from this account (nothing changes on GitHub: uninstall the App there
    to remove it). The repositories registered through it are kept, readable as of their last fetch,
    with `integration_id` null and `auto_analyze` and `report_check_runs` off; they are no longer
    fetched (a read that needs a fetch answers 409) and webhooks no longer reach them. Delete them like
    any repository.

    Scope: `integrations:write`.

    Args:
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Any | Error | ValidationError | None:
    """Disconnect an integration

     Disconnects the installation from this account (nothing changes on GitHub: uninstall the App there
    to remove it). The repositories registered through it are kept, readable as of their last fetch,
    with `integration_id` null and `auto_analyze` and `report_check_runs` off; they are no longer
    fetched (a read that needs a fetch answers 409) and webhooks no longer reach them. Delete them like
    any repository.

    Scope: `integrations:write`.

    Args:
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | ValidationError
    """

    return sync_detailed(
        integration_id=integration_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Any | Error | ValidationError]:
    """Disconnect an integration

     Disconnects the installation from this account (nothing changes on GitHub: uninstall the App there
    to remove it). The repositories registered through it are kept, readable as of their last fetch,
    with `integration_id` null and `auto_analyze` and `report_check_runs` off; they are no longer
    fetched (a read that needs a fetch answers 409) and webhooks no longer reach them. Delete them like
    any repository.

    Scope: `integrations:write`.

    Args:
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        integration_id=integration_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    integration_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Any | Error | ValidationError | None:
    """Disconnect an integration

     Disconnects the installation from this account (nothing changes on GitHub: uninstall the App there
    to remove it). The repositories registered through it are kept, readable as of their last fetch,
    with `integration_id` null and `auto_analyze` and `report_check_runs` off; they are no longer
    fetched (a read that needs a fetch answers 409) and webhooks no longer reach them. Delete them like
    any repository.

    Scope: `integrations:write`.

    Args:
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            integration_id=integration_id,
            client=client,
        )
    ).parsed
