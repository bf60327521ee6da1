from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.analysis_log_event_type_0 import AnalysisLogEventType0
from ...models.analysis_log_event_type_1 import AnalysisLogEventType1
from ...models.analysis_log_event_type_2 import AnalysisLogEventType2
from ...models.error import Error
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    repository_id: UUID,
    commit_hash: str,
    *,
    after: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/repositories/{repository_id}/analysis/{commit_hash}/logs/stream".format(
            repository_id=quote(str(repository_id), safe=""),
            commit_hash=quote(str(commit_hash), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
    | None
):
    if response.status_code == 200:

        def _parse_response_200(
            data: object,
        ) -> AnalysisLogEventType0 | AnalysisLogEventType1 | AnalysisLogEventType2:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_analysis_log_event_type_0 = (
                    AnalysisLogEventType0.from_dict(data)
                )

                return componentsschemas_analysis_log_event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_analysis_log_event_type_1 = (
                    AnalysisLogEventType1.from_dict(data)
                )

                return componentsschemas_analysis_log_event_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_analysis_log_event_type_2 = (
                AnalysisLogEventType2.from_dict(data)
            )

            return componentsschemas_analysis_log_event_type_2

        response_200 = _parse_response_200(response.text)

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
) -> Response[
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> Response[
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
]:
    """Stream an analysis's progress live

     The same Server-Sent Events as a run's stream (`status`, `stdout`/`stderr` with `id: <seq>`, `:
    ping`, `end`; resume with `Last-Event-ID` or `?after=`). Statuses are the analysis's: pending,
    running, completed, failed, cancelled. The analyzer's progress lines come as `stdout`; its result is
    not part of the stream: read it with GET once `end` arrives.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnalysisLogEventType0 | AnalysisLogEventType1 | AnalysisLogEventType2 | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        after=after,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> (
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
    | None
):
    """Stream an analysis's progress live

     The same Server-Sent Events as a run's stream (`status`, `stdout`/`stderr` with `id: <seq>`, `:
    ping`, `end`; resume with `Last-Event-ID` or `?after=`). Statuses are the analysis's: pending,
    running, completed, failed, cancelled. The analyzer's progress lines come as `stdout`; its result is
    not part of the stream: read it with GET once `end` arrives.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnalysisLogEventType0 | AnalysisLogEventType1 | AnalysisLogEventType2 | Error | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        commit_hash=commit_hash,
        client=client,
        after=after,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> Response[
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
]:
    """Stream an analysis's progress live

     The same Server-Sent Events as a run's stream (`status`, `stdout`/`stderr` with `id: <seq>`, `:
    ping`, `end`; resume with `Last-Event-ID` or `?after=`). Statuses are the analysis's: pending,
    running, completed, failed, cancelled. The analyzer's progress lines come as `stdout`; its result is
    not part of the stream: read it with GET once `end` arrives.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnalysisLogEventType0 | AnalysisLogEventType1 | AnalysisLogEventType2 | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        after=after,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> (
    AnalysisLogEventType0
    | AnalysisLogEventType1
    | AnalysisLogEventType2
    | Error
    | ValidationError
    | None
):
    """Stream an analysis's progress live

     The same Server-Sent Events as a run's stream (`status`, `stdout`/`stderr` with `id: <seq>`, `:
    ping`, `end`; resume with `Last-Event-ID` or `?after=`). Statuses are the analysis's: pending,
    running, completed, failed, cancelled. The analyzer's progress lines come as `stdout`; its result is
    not part of the stream: read it with GET once `end` arrives.

    Scope: `analyses:read`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnalysisLogEventType0 | AnalysisLogEventType1 | AnalysisLogEventType2 | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            commit_hash=commit_hash,
            client=client,
            after=after,
        )
    ).parsed
