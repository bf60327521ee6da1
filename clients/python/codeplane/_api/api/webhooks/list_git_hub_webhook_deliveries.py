from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.validation_error import ValidationError
from ...models.webhook_delivery_page import WebhookDeliveryPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
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
        "url": "/v1/webhooks/github/deliveries",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ValidationError | WebhookDeliveryPage | None:
    if response.status_code == 200:
        response_200 = WebhookDeliveryPage.from_dict(response.json())

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
) -> Response[Error | ValidationError | WebhookDeliveryPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | ValidationError | WebhookDeliveryPage]:
    """Recent GitHub webhook deliveries

     Deliveries about the installations this account has connected, received while they were connected to
    it, newest first: what each one did, and why it was skipped or failed. For an operator finding out
    why a push was not analysed. Finished deliveries are kept 30 days.

    Scope: `integrations:read`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The `next_cursor` of the previous page, unchanged.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ValidationError | WebhookDeliveryPage]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | ValidationError | WebhookDeliveryPage | None:
    """Recent GitHub webhook deliveries

     Deliveries about the installations this account has connected, received while they were connected to
    it, newest first: what each one did, and why it was skipped or failed. For an operator finding out
    why a push was not analysed. Finished deliveries are kept 30 days.

    Scope: `integrations:read`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The `next_cursor` of the previous page, unchanged.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ValidationError | WebhookDeliveryPage
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | ValidationError | WebhookDeliveryPage]:
    """Recent GitHub webhook deliveries

     Deliveries about the installations this account has connected, received while they were connected to
    it, newest first: what each one did, and why it was skipped or failed. For an operator finding out
    why a push was not analysed. Finished deliveries are kept 30 days.

    Scope: `integrations:read`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The `next_cursor` of the previous page, unchanged.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ValidationError | WebhookDeliveryPage]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | ValidationError | WebhookDeliveryPage | None:
    """Recent GitHub webhook deliveries

     Deliveries about the installations this account has connected, received while they were connected to
    it, newest first: what each one did, and why it was skipped or failed. For an operator finding out
    why a push was not analysed. Finished deliveries are kept 30 days.

    Scope: `integrations:read`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): The `next_cursor` of the previous page, unchanged.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ValidationError | WebhookDeliveryPage
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
