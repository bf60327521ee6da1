from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rerun import Rerun
from ...models.run import Run
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: UUID,
    *,
    body: Rerun,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/{run_id}/rerun".format(
            run_id=quote(str(run_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Run | ValidationError | None:
    if response.status_code == 201:
        response_201 = Run.from_dict(response.json())

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
) -> Response[Error | Run | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    body: Rerun,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | Run | ValidationError]:
    """Run again

     Starts a new run of the same commit and the same experiment (its parameter values, with `parameters`
    merged over them) or command, on the same compute type (or `compute_type`), with the same timeout
    (or `timeout_seconds`) and the same kind of environment. The new run's `rerun_of` names this one.
    `Idempotency-Key` works as on run creation.

    Scope: `runs:write`.

    Args:
        run_id (UUID):
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (Rerun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Run | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    body: Rerun,
    idempotency_key: str | Unset = UNSET,
) -> Error | Run | ValidationError | None:
    """Run again

     Starts a new run of the same commit and the same experiment (its parameter values, with `parameters`
    merged over them) or command, on the same compute type (or `compute_type`), with the same timeout
    (or `timeout_seconds`) and the same kind of environment. The new run's `rerun_of` names this one.
    `Idempotency-Key` works as on run creation.

    Scope: `runs:write`.

    Args:
        run_id (UUID):
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (Rerun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Run | ValidationError
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    body: Rerun,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | Run | ValidationError]:
    """Run again

     Starts a new run of the same commit and the same experiment (its parameter values, with `parameters`
    merged over them) or command, on the same compute type (or `compute_type`), with the same timeout
    (or `timeout_seconds`) and the same kind of environment. The new run's `rerun_of` names this one.
    `Idempotency-Key` works as on run creation.

    Scope: `runs:write`.

    Args:
        run_id (UUID):
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (Rerun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Run | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    body: Rerun,
    idempotency_key: str | Unset = UNSET,
) -> Error | Run | ValidationError | None:
    """Run again

     Starts a new run of the same commit and the same experiment (its parameter values, with `parameters`
    merged over them) or command, on the same compute type (or `compute_type`), with the same timeout
    (or `timeout_seconds`) and the same kind of environment. The new run's `rerun_of` names this one.
    `Idempotency-Key` works as on run creation.

    Scope: `runs:write`.

    Args:
        run_id (UUID):
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (Rerun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Run | ValidationError
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
