from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.run_metrics import RunMetrics
from ...models.validation_error import ValidationError
from ...types import Response


def _get_kwargs(
    run_id: UUID,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/metrics".format(
            run_id=quote(str(run_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RunMetrics | ValidationError | None:
    if response.status_code == 200:
        response_200 = RunMetrics.from_dict(response.json())

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
) -> Response[Error | RunMetrics | ValidationError]:
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
) -> Response[Error | RunMetrics | ValidationError]:
    """Read a run's metrics

     The series the run reported by printing `::metric` lines on stdout or appending records to
    `$CODEPLANE_METRICS_FILE` (docs/users/results.md, Metrics): each series' points by step, each one's
    final value, and how many points the operator's bounds refused. Points arrive as the run's output is
    archived, so a run still going answers with its metrics so far.

    Scope: `runs:read`.

    Args:
        run_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunMetrics | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Error | RunMetrics | ValidationError | None:
    """Read a run's metrics

     The series the run reported by printing `::metric` lines on stdout or appending records to
    `$CODEPLANE_METRICS_FILE` (docs/users/results.md, Metrics): each series' points by step, each one's
    final value, and how many points the operator's bounds refused. Points arrive as the run's output is
    archived, so a run still going answers with its metrics so far.

    Scope: `runs:read`.

    Args:
        run_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunMetrics | ValidationError
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Response[Error | RunMetrics | ValidationError]:
    """Read a run's metrics

     The series the run reported by printing `::metric` lines on stdout or appending records to
    `$CODEPLANE_METRICS_FILE` (docs/users/results.md, Metrics): each series' points by step, each one's
    final value, and how many points the operator's bounds refused. Points arrive as the run's output is
    archived, so a run still going answers with its metrics so far.

    Scope: `runs:read`.

    Args:
        run_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunMetrics | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
) -> Error | RunMetrics | ValidationError | None:
    """Read a run's metrics

     The series the run reported by printing `::metric` lines on stdout or appending records to
    `$CODEPLANE_METRICS_FILE` (docs/users/results.md, Metrics): each series' points by step, each one's
    final value, and how many points the operator's bounds refused. Points arrive as the run's output is
    archived, so a run still going answers with its metrics so far.

    Scope: `runs:read`.

    Args:
        run_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunMetrics | ValidationError
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
        )
    ).parsed
