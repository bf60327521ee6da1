from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.run_log_page import RunLogPage
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: UUID,
    *,
    after: int | None | Unset = UNSET,
    before: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_after: int | None | Unset
    if isinstance(after, Unset):
        json_after = UNSET
    else:
        json_after = after
    params["after"] = json_after

    json_before: int | None | Unset
    if isinstance(before, Unset):
        json_before = UNSET
    else:
        json_before = before
    params["before"] = json_before

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/logs/groups".format(
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RunLogPage | ValidationError | None:
    if response.status_code == 200:
        response_200 = RunLogPage.from_dict(response.json())

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
) -> Response[Error | RunLogPage | ValidationError]:
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
    after: int | None | Unset = UNSET,
    before: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[Error | RunLogPage | ValidationError]:
    """List the group markers in a run's stored output

     The stored lines that start with `::group::<title>` or `::endgroup::` (the markers GitHub Actions'
    runners print), in seq order, paged as `GET /v1/runs/{run_id}/logs` is (`?after=`, `?before=`,
    `limit`). The dashboard folds each group to its title line. Read through an index of the lines that
    start with `::`, so a run of a million lines answers in milliseconds.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (int | None | Unset): Lines with seq greater than this, oldest first: 0 (or a page's
            `next_after`) to read forwards from the start.
        before (int | None | Unset): Lines with seq less than this, the newest `limit` of them
            (still oldest first): a number above `last_seq` reads the log's end. Ignored when `after`
            is given.
        limit (int | Unset): Lines per page, 1..5000; default 1000 (and about 4 MiB of text at
            most, always one line).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogPage | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        after=after,
        before=before,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: int | None | Unset = UNSET,
    before: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Error | RunLogPage | ValidationError | None:
    """List the group markers in a run's stored output

     The stored lines that start with `::group::<title>` or `::endgroup::` (the markers GitHub Actions'
    runners print), in seq order, paged as `GET /v1/runs/{run_id}/logs` is (`?after=`, `?before=`,
    `limit`). The dashboard folds each group to its title line. Read through an index of the lines that
    start with `::`, so a run of a million lines answers in milliseconds.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (int | None | Unset): Lines with seq greater than this, oldest first: 0 (or a page's
            `next_after`) to read forwards from the start.
        before (int | None | Unset): Lines with seq less than this, the newest `limit` of them
            (still oldest first): a number above `last_seq` reads the log's end. Ignored when `after`
            is given.
        limit (int | Unset): Lines per page, 1..5000; default 1000 (and about 4 MiB of text at
            most, always one line).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogPage | ValidationError
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
        after=after,
        before=before,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: int | None | Unset = UNSET,
    before: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[Error | RunLogPage | ValidationError]:
    """List the group markers in a run's stored output

     The stored lines that start with `::group::<title>` or `::endgroup::` (the markers GitHub Actions'
    runners print), in seq order, paged as `GET /v1/runs/{run_id}/logs` is (`?after=`, `?before=`,
    `limit`). The dashboard folds each group to its title line. Read through an index of the lines that
    start with `::`, so a run of a million lines answers in milliseconds.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (int | None | Unset): Lines with seq greater than this, oldest first: 0 (or a page's
            `next_after`) to read forwards from the start.
        before (int | None | Unset): Lines with seq less than this, the newest `limit` of them
            (still oldest first): a number above `last_seq` reads the log's end. Ignored when `after`
            is given.
        limit (int | Unset): Lines per page, 1..5000; default 1000 (and about 4 MiB of text at
            most, always one line).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogPage | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        after=after,
        before=before,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: int | None | Unset = UNSET,
    before: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Error | RunLogPage | ValidationError | None:
    """List the group markers in a run's stored output

     The stored lines that start with `::group::<title>` or `::endgroup::` (the markers GitHub Actions'
    runners print), in seq order, paged as `GET /v1/runs/{run_id}/logs` is (`?after=`, `?before=`,
    `limit`). The dashboard folds each group to its title line. Read through an index of the lines that
    start with `::`, so a run of a million lines answers in milliseconds.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (int | None | Unset): Lines with seq greater than this, oldest first: 0 (or a page's
            `next_after`) to read forwards from the start.
        before (int | None | Unset): Lines with seq less than this, the newest `limit` of them
            (still oldest first): a number above `last_seq` reads the log's end. Ignored when `after`
            is given.
        limit (int | Unset): Lines per page, 1..5000; default 1000 (and about 4 MiB of text at
            most, always one line).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogPage | ValidationError
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
            after=after,
            before=before,
            limit=limit,
        )
    ).parsed
