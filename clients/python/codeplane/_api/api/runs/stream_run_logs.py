from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.run_log_event_type_0 import RunLogEventType0
from ...models.run_log_event_type_1 import RunLogEventType1
from ...models.run_log_event_type_2 import RunLogEventType2
from ...models.run_log_event_type_3 import RunLogEventType3
from ...models.run_log_event_type_4 import RunLogEventType4
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: UUID,
    *,
    after: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/logs/stream".format(
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
    | None
):
    if response.status_code == 200:

        def _parse_response_200(
            data: object,
        ) -> (
            RunLogEventType0
            | RunLogEventType1
            | RunLogEventType2
            | RunLogEventType3
            | RunLogEventType4
        ):
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_log_event_type_0 = RunLogEventType0.from_dict(
                    data
                )

                return componentsschemas_run_log_event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_log_event_type_1 = RunLogEventType1.from_dict(
                    data
                )

                return componentsschemas_run_log_event_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_log_event_type_2 = RunLogEventType2.from_dict(
                    data
                )

                return componentsschemas_run_log_event_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_log_event_type_3 = RunLogEventType3.from_dict(
                    data
                )

                return componentsschemas_run_log_event_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_run_log_event_type_4 = RunLogEventType4.from_dict(data)

            return componentsschemas_run_log_event_type_4

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
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
]:
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
    after: str | Unset = UNSET,
) -> Response[
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
]:
    """Stream a run's output live

     Server-Sent Events. `retry: 3000` first; `event: status` with `id: <seq>:<phase>` and `{"status":
    ...}` for each phase the run goes through, once and in order (on connect the phases so far; every
    live phase before the first line, a terminal one after the last line); `event: setup` with `id:
    <seq>:preprocessing/<n>` and `{"n", "ts", "line"}` per line of the install of the environment the
    run waits for, while it waits for that build (`n` counts the install's lines from 1; after the
    `preprocessing` status, before the `running` status and the first line; none for a cache hit, a run
    without an environment, or a client that connects once the command has started; a client that comes
    after the build has ended is sent the lines it lacks from the stored log, `GET
    /v1/runs/{run_id}/logs/setup`, numbered by their place in it, which differs from the live numbering
    only when the install wrote more than is stored, 256 KiB); `event: timeline` (no id) with
    `{"timeline": [...]}`, the run's whole `timeline` exactly as `GET /v1/runs/{run_id}` shows it, on
    connect and again each time it gains an event (a full snapshot replacing the last one; a reconnect
    is sent the current one; any time before `end`, never after it; the last one read, with `ended` once
    the row has it, before the terminal status); `event: stdout` / `event: stderr` with `id: <seq>` and
    `{"seq", "ts", "line"}` per line; a `: ping` comment every 15 s; `event: end` with `{"status",
    "exit_code"}` once every line is sent and the run is over, then the server closes. Resume with
    `Last-Event-ID` or `?after=` (a line's seq, a status event's id or a setup event's id): no line,
    setup line or status is lost or repeated. A client joining after the end gets the stored lines, then
    `end`.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogEventType0 | RunLogEventType1 | RunLogEventType2 | RunLogEventType3 | RunLogEventType4 | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        after=after,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> (
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
    | None
):
    """Stream a run's output live

     Server-Sent Events. `retry: 3000` first; `event: status` with `id: <seq>:<phase>` and `{"status":
    ...}` for each phase the run goes through, once and in order (on connect the phases so far; every
    live phase before the first line, a terminal one after the last line); `event: setup` with `id:
    <seq>:preprocessing/<n>` and `{"n", "ts", "line"}` per line of the install of the environment the
    run waits for, while it waits for that build (`n` counts the install's lines from 1; after the
    `preprocessing` status, before the `running` status and the first line; none for a cache hit, a run
    without an environment, or a client that connects once the command has started; a client that comes
    after the build has ended is sent the lines it lacks from the stored log, `GET
    /v1/runs/{run_id}/logs/setup`, numbered by their place in it, which differs from the live numbering
    only when the install wrote more than is stored, 256 KiB); `event: timeline` (no id) with
    `{"timeline": [...]}`, the run's whole `timeline` exactly as `GET /v1/runs/{run_id}` shows it, on
    connect and again each time it gains an event (a full snapshot replacing the last one; a reconnect
    is sent the current one; any time before `end`, never after it; the last one read, with `ended` once
    the row has it, before the terminal status); `event: stdout` / `event: stderr` with `id: <seq>` and
    `{"seq", "ts", "line"}` per line; a `: ping` comment every 15 s; `event: end` with `{"status",
    "exit_code"}` once every line is sent and the run is over, then the server closes. Resume with
    `Last-Event-ID` or `?after=` (a line's seq, a status event's id or a setup event's id): no line,
    setup line or status is lost or repeated. A client joining after the end gets the stored lines, then
    `end`.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogEventType0 | RunLogEventType1 | RunLogEventType2 | RunLogEventType3 | RunLogEventType4 | ValidationError
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
        after=after,
    ).parsed


async def asyncio_detailed(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> Response[
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
]:
    """Stream a run's output live

     Server-Sent Events. `retry: 3000` first; `event: status` with `id: <seq>:<phase>` and `{"status":
    ...}` for each phase the run goes through, once and in order (on connect the phases so far; every
    live phase before the first line, a terminal one after the last line); `event: setup` with `id:
    <seq>:preprocessing/<n>` and `{"n", "ts", "line"}` per line of the install of the environment the
    run waits for, while it waits for that build (`n` counts the install's lines from 1; after the
    `preprocessing` status, before the `running` status and the first line; none for a cache hit, a run
    without an environment, or a client that connects once the command has started; a client that comes
    after the build has ended is sent the lines it lacks from the stored log, `GET
    /v1/runs/{run_id}/logs/setup`, numbered by their place in it, which differs from the live numbering
    only when the install wrote more than is stored, 256 KiB); `event: timeline` (no id) with
    `{"timeline": [...]}`, the run's whole `timeline` exactly as `GET /v1/runs/{run_id}` shows it, on
    connect and again each time it gains an event (a full snapshot replacing the last one; a reconnect
    is sent the current one; any time before `end`, never after it; the last one read, with `ended` once
    the row has it, before the terminal status); `event: stdout` / `event: stderr` with `id: <seq>` and
    `{"seq", "ts", "line"}` per line; a `: ping` comment every 15 s; `event: end` with `{"status",
    "exit_code"}` once every line is sent and the run is over, then the server closes. Resume with
    `Last-Event-ID` or `?after=` (a line's seq, a status event's id or a setup event's id): no line,
    setup line or status is lost or repeated. A client joining after the end gets the stored lines, then
    `end`.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunLogEventType0 | RunLogEventType1 | RunLogEventType2 | RunLogEventType3 | RunLogEventType4 | ValidationError]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        after=after,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: UUID,
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
) -> (
    Error
    | RunLogEventType0
    | RunLogEventType1
    | RunLogEventType2
    | RunLogEventType3
    | RunLogEventType4
    | ValidationError
    | None
):
    """Stream a run's output live

     Server-Sent Events. `retry: 3000` first; `event: status` with `id: <seq>:<phase>` and `{"status":
    ...}` for each phase the run goes through, once and in order (on connect the phases so far; every
    live phase before the first line, a terminal one after the last line); `event: setup` with `id:
    <seq>:preprocessing/<n>` and `{"n", "ts", "line"}` per line of the install of the environment the
    run waits for, while it waits for that build (`n` counts the install's lines from 1; after the
    `preprocessing` status, before the `running` status and the first line; none for a cache hit, a run
    without an environment, or a client that connects once the command has started; a client that comes
    after the build has ended is sent the lines it lacks from the stored log, `GET
    /v1/runs/{run_id}/logs/setup`, numbered by their place in it, which differs from the live numbering
    only when the install wrote more than is stored, 256 KiB); `event: timeline` (no id) with
    `{"timeline": [...]}`, the run's whole `timeline` exactly as `GET /v1/runs/{run_id}` shows it, on
    connect and again each time it gains an event (a full snapshot replacing the last one; a reconnect
    is sent the current one; any time before `end`, never after it; the last one read, with `ended` once
    the row has it, before the terminal status); `event: stdout` / `event: stderr` with `id: <seq>` and
    `{"seq", "ts", "line"}` per line; a `: ping` comment every 15 s; `event: end` with `{"status",
    "exit_code"}` once every line is sent and the run is over, then the server closes. Resume with
    `Last-Event-ID` or `?after=` (a line's seq, a status event's id or a setup event's id): no line,
    setup line or status is lost or repeated. A client joining after the end gets the stored lines, then
    `end`.

    Scope: `runs:read`.

    Args:
        run_id (UUID):
        after (str | Unset): Resume after this event id: a line's seq, a status event's
            `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-
            Event-ID wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunLogEventType0 | RunLogEventType1 | RunLogEventType2 | RunLogEventType3 | RunLogEventType4 | ValidationError
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
            after=after,
        )
    ).parsed
