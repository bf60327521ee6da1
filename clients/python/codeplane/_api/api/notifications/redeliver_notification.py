from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.notification_delivery import NotificationDelivery
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    endpoint_id: UUID,
    delivery_id: UUID,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/notification-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver".format(
            endpoint_id=quote(str(endpoint_id), safe=""),
            delivery_id=quote(str(delivery_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | NotificationDelivery | ValidationError | None:
    if response.status_code == 202:
        response_202 = NotificationDelivery.from_dict(response.json())

        return response_202

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
) -> Response[Error | NotificationDelivery | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    endpoint_id: UUID,
    delivery_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Error | NotificationDelivery | ValidationError]:
    """Send a delivery again

     Queues a delivered or failed delivery again, to be sent now with the same `webhook-id` and body
    (receivers that deduplicate on `webhook-id` treat it as the same message), retried like a new one.

    Scope: `notifications:write`.

    Args:
        endpoint_id (UUID):
        delivery_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | NotificationDelivery | ValidationError]
    """

    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
        delivery_id=delivery_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    endpoint_id: UUID,
    delivery_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Error | NotificationDelivery | ValidationError | None:
    """Send a delivery again

     Queues a delivered or failed delivery again, to be sent now with the same `webhook-id` and body
    (receivers that deduplicate on `webhook-id` treat it as the same message), retried like a new one.

    Scope: `notifications:write`.

    Args:
        endpoint_id (UUID):
        delivery_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | NotificationDelivery | ValidationError
    """

    return sync_detailed(
        endpoint_id=endpoint_id,
        delivery_id=delivery_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    endpoint_id: UUID,
    delivery_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Error | NotificationDelivery | ValidationError]:
    """Send a delivery again

     Queues a delivered or failed delivery again, to be sent now with the same `webhook-id` and body
    (receivers that deduplicate on `webhook-id` treat it as the same message), retried like a new one.

    Scope: `notifications:write`.

    Args:
        endpoint_id (UUID):
        delivery_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | NotificationDelivery | ValidationError]
    """

    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
        delivery_id=delivery_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    endpoint_id: UUID,
    delivery_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Error | NotificationDelivery | ValidationError | None:
    """Send a delivery again

     Queues a delivered or failed delivery again, to be sent now with the same `webhook-id` and body
    (receivers that deduplicate on `webhook-id` treat it as the same message), retried like a new one.

    Scope: `notifications:write`.

    Args:
        endpoint_id (UUID):
        delivery_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | NotificationDelivery | ValidationError
    """

    return (
        await asyncio_detailed(
            endpoint_id=endpoint_id,
            delivery_id=delivery_id,
            client=client,
        )
    ).parsed
