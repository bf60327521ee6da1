from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.run_log_search import RunLogSearch
from ...models.search_run_logs_case_sensitive import SearchRunLogsCaseSensitive
from ...models.search_run_logs_stream import SearchRunLogsStream
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: UUID,
    *,
    q: str,
    stream: SearchRunLogsStream | Unset = UNSET,
    after: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
    case_sensitive: SearchRunLogsCaseSensitive | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["q"] = q

    json_stream: str | Unset = UNSET
    if not isinstance(stream, Unset):
        json_stream = stream.value

    params["stream"] = json_stream

    json_after: int | None | Unset
    if isinstance(after, Unset):
        json_after = UNSET
    else:
        json_after = after
    params["after"] = json_after

    params["limit"] = limit

    json_case_sensitive: str | Unset = UNSET
    if not isinstance(case_sensitive, Unset):
        json_case_sensitive = case_sensitive.value

    params["case_sensitive"] = json_case_sensitive

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/logs/search".format(
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RunLogSearch | ValidationError | None:
    if response.status_code == 200:
        response_200 = RunLogSearch.from_dict(response.json())

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
) -> Response[Error | RunLogSearch | ValidationError]:
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
    q: str,
    stream: SearchRunLogsStream | Unset = UNSET,
    after: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
    case_sensitive: SearchRunLogsCaseSensitive | Unset = UNSET,
) -> Response[Error | RunLogSearch | ValidationError]:
    """Search a run's stored output

     The stored lines that contain `q` (a literal substring, case-insensitive unless
    `case_sensitive=true`), in seq order, from the whole stored log (not only its end), at most `limit`
    per answer. Each answer searches until it has `limit` matches, reaches the last stored line, or has
    spent its time budget (2 s); `next_after` says where to go on (null: the search reached the end of
    what is stored).

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        q (str): Text to find: a literal substring (no wildcards), 1..256 characters.
        stream (SearchRunLogsStream | Unset): Search one stream; both by default.
        after (int | None | Unset): Search lines with seq greater than this: 0 by default, or the
            previous answer's `next_after`.
        limit (int | Unset): Matches per answer, 1..500; default 50.
        case_sensitive (SearchRunLogsCaseSensitive | Unset): `true`: match case exactly; case-
            insensitive by default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogSearch | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        q=q,
        stream=stream,
        after=after,
        limit=limit,
        case_sensitive=case_sensitive,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    q: str,
    stream: SearchRunLogsStream | Unset = UNSET,
    after: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
    case_sensitive: SearchRunLogsCaseSensitive | Unset = UNSET,
) -> Error | RunLogSearch | ValidationError | None:
    """Search a run's stored output

     The stored lines that contain `q` (a literal substring, case-insensitive unless
    `case_sensitive=true`), in seq order, from the whole stored log (not only its end), at most `limit`
    per answer. Each answer searches until it has `limit` matches, reaches the last stored line, or has
    spent its time budget (2 s); `next_after` says where to go on (null: the search reached the end of
    what is stored).

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        q (str): Text to find: a literal substring (no wildcards), 1..256 characters.
        stream (SearchRunLogsStream | Unset): Search one stream; both by default.
        after (int | None | Unset): Search lines with seq greater than this: 0 by default, or the
            previous answer's `next_after`.
        limit (int | Unset): Matches per answer, 1..500; default 50.
        case_sensitive (SearchRunLogsCaseSensitive | Unset): `true`: match case exactly; case-
            insensitive by default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogSearch | ValidationError
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
        q=q,
        stream=stream,
        after=after,
        limit=limit,
        case_sensitive=case_sensitive,
    ).parsed


async def asyncio_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    q: str,
    stream: SearchRunLogsStream | Unset = UNSET,
    after: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
    case_sensitive: SearchRunLogsCaseSensitive | Unset = UNSET,
) -> Response[Error | RunLogSearch | ValidationError]:
    """Search a run's stored output

     The stored lines that contain `q` (a literal substring, case-insensitive unless
    `case_sensitive=true`), in seq order, from the whole stored log (not only its end), at most `limit`
    per answer. Each answer searches until it has `limit` matches, reaches the last stored line, or has
    spent its time budget (2 s); `next_after` says where to go on (null: the search reached the end of
    what is stored).

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        q (str): Text to find: a literal substring (no wildcards), 1..256 characters.
        stream (SearchRunLogsStream | Unset): Search one stream; both by default.
        after (int | None | Unset): Search lines with seq greater than this: 0 by default, or the
            previous answer's `next_after`.
        limit (int | Unset): Matches per answer, 1..500; default 50.
        case_sensitive (SearchRunLogsCaseSensitive | Unset): `true`: match case exactly; case-
            insensitive by default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogSearch | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        q=q,
        stream=stream,
        after=after,
        limit=limit,
        case_sensitive=case_sensitive,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    q: str,
    stream: SearchRunLogsStream | Unset = UNSET,
    after: int | None | Unset = UNSET,
    limit: int | Unset = UNSET,
    case_sensitive: SearchRunLogsCaseSensitive | Unset = UNSET,
) -> Error | RunLogSearch | ValidationError | None:
    """Search a run's stored output

     The stored lines that contain `q` (a literal substring, case-insensitive unless
    `case_sensitive=true`), in seq order, from the whole stored log (not only its end), at most `limit`
    per answer. Each answer searches until it has `limit` matches, reaches the last stored line, or has
    spent its time budget (2 s); `next_after` says where to go on (null: the search reached the end of
    what is stored).

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        q (str): Text to find: a literal substring (no wildcards), 1..256 characters.
        stream (SearchRunLogsStream | Unset): Search one stream; both by default.
        after (int | None | Unset): Search lines with seq greater than this: 0 by default, or the
            previous answer's `next_after`.
        limit (int | Unset): Matches per answer, 1..500; default 50.
        case_sensitive (SearchRunLogsCaseSensitive | Unset): `true`: match case exactly; case-
            insensitive by default.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogSearch | ValidationError
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
            q=q,
            stream=stream,
            after=after,
            limit=limit,
            case_sensitive=case_sensitive,
        )
    ).parsed
