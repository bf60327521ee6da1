from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.run_feed_event_type_0 import RunFeedEventType0
from ...models.run_feed_event_type_1 import RunFeedEventType1
from ...models.run_feed_event_type_2 import RunFeedEventType2
from ...models.run_feed_event_type_3 import RunFeedEventType3
from ...models.stream_run_events_status import StreamRunEventsStatus
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    repository_id: UUID | Unset = UNSET,
    status: StreamRunEventsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_repository_id: str | Unset = UNSET
    if not isinstance(repository_id, Unset):
        json_repository_id = str(repository_id)
    params["repository_id"] = json_repository_id

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    Error
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
    | None
):
    if response.status_code == 200:

        def _parse_response_200(
            data: object,
        ) -> (
            RunFeedEventType0
            | RunFeedEventType1
            | RunFeedEventType2
            | RunFeedEventType3
        ):
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_feed_event_type_0 = RunFeedEventType0.from_dict(
                    data
                )

                return componentsschemas_run_feed_event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_feed_event_type_1 = RunFeedEventType1.from_dict(
                    data
                )

                return componentsschemas_run_feed_event_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_feed_event_type_2 = RunFeedEventType2.from_dict(
                    data
                )

                return componentsschemas_run_feed_event_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_run_feed_event_type_3 = RunFeedEventType3.from_dict(data)

            return componentsschemas_run_feed_event_type_3

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
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    repository_id: UUID | Unset = UNSET,
    status: StreamRunEventsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
) -> Response[
    Error
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
]:
    """Follow the account's runs as they change

     Server-Sent Events: `event: run` with a run's new state (as `GET /v1/runs/{run_id}` shows it) each
    time what the API shows of it changes, `event: deleted` when one is deleted, for the account's runs
    that pass the filters (`repository_id`; `status`: runs that are, or have been, in it, so one that
    leaves it is sent with its new status). Changes are found by each API process (within about 50 ms of
    their commit on a Postgres server, and at least once a second), whichever process or the controller
    made them. On connect `event: ready` (with an `id`) says the stream is live; a client that shows a
    list reads it after that event. Resume with `Last-Event-ID` or `?after=` (an id the stream sent):
    first the current state of every run that changed since, then `ready`, then what changes next;
    nothing is lost, and a run's state may come twice (apply by `run_id`). Over 1,000 changed runs since
    the resume point: `event: reset` (read the list again) instead; also, after `ready`, when over
    10,000 runs changed at once and some were the account's. A stream is dropped when its client still
    has 1 MiB unread when the next event or ping is due (one large batch alone never drops it), and
    ended when the process shuts down; the client then resumes. At most 10 streams per account per API
    process unless the operator set another limit (`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT`); 429
    beyond.

    Scope: `runs:read`.

    Args:
        repository_id (UUID | Unset): Only this repository's runs.
        status (StreamRunEventsStatus | Unset): Only runs that are, or have been, in this status:
            a run that leaves it is sent once more, with its new status.
        after (str | Unset): Resume after this event id (`Last-Event-ID` wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunFeedEventType0 | RunFeedEventType1 | RunFeedEventType2 | RunFeedEventType3 | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        status=status,
        after=after,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    repository_id: UUID | Unset = UNSET,
    status: StreamRunEventsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
) -> (
    Error
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
    | None
):
    """Follow the account's runs as they change

     Server-Sent Events: `event: run` with a run's new state (as `GET /v1/runs/{run_id}` shows it) each
    time what the API shows of it changes, `event: deleted` when one is deleted, for the account's runs
    that pass the filters (`repository_id`; `status`: runs that are, or have been, in it, so one that
    leaves it is sent with its new status). Changes are found by each API process (within about 50 ms of
    their commit on a Postgres server, and at least once a second), whichever process or the controller
    made them. On connect `event: ready` (with an `id`) says the stream is live; a client that shows a
    list reads it after that event. Resume with `Last-Event-ID` or `?after=` (an id the stream sent):
    first the current state of every run that changed since, then `ready`, then what changes next;
    nothing is lost, and a run's state may come twice (apply by `run_id`). Over 1,000 changed runs since
    the resume point: `event: reset` (read the list again) instead; also, after `ready`, when over
    10,000 runs changed at once and some were the account's. A stream is dropped when its client still
    has 1 MiB unread when the next event or ping is due (one large batch alone never drops it), and
    ended when the process shuts down; the client then resumes. At most 10 streams per account per API
    process unless the operator set another limit (`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT`); 429
    beyond.

    Scope: `runs:read`.

    Args:
        repository_id (UUID | Unset): Only this repository's runs.
        status (StreamRunEventsStatus | Unset): Only runs that are, or have been, in this status:
            a run that leaves it is sent once more, with its new status.
        after (str | Unset): Resume after this event id (`Last-Event-ID` wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunFeedEventType0 | RunFeedEventType1 | RunFeedEventType2 | RunFeedEventType3 | ValidationError
    """

    return sync_detailed(
        client=client,
        repository_id=repository_id,
        status=status,
        after=after,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    repository_id: UUID | Unset = UNSET,
    status: StreamRunEventsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
) -> Response[
    Error
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
]:
    """Follow the account's runs as they change

     Server-Sent Events: `event: run` with a run's new state (as `GET /v1/runs/{run_id}` shows it) each
    time what the API shows of it changes, `event: deleted` when one is deleted, for the account's runs
    that pass the filters (`repository_id`; `status`: runs that are, or have been, in it, so one that
    leaves it is sent with its new status). Changes are found by each API process (within about 50 ms of
    their commit on a Postgres server, and at least once a second), whichever process or the controller
    made them. On connect `event: ready` (with an `id`) says the stream is live; a client that shows a
    list reads it after that event. Resume with `Last-Event-ID` or `?after=` (an id the stream sent):
    first the current state of every run that changed since, then `ready`, then what changes next;
    nothing is lost, and a run's state may come twice (apply by `run_id`). Over 1,000 changed runs since
    the resume point: `event: reset` (read the list again) instead; also, after `ready`, when over
    10,000 runs changed at once and some were the account's. A stream is dropped when its client still
    has 1 MiB unread when the next event or ping is due (one large batch alone never drops it), and
    ended when the process shuts down; the client then resumes. At most 10 streams per account per API
    process unless the operator set another limit (`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT`); 429
    beyond.

    Scope: `runs:read`.

    Args:
        repository_id (UUID | Unset): Only this repository's runs.
        status (StreamRunEventsStatus | Unset): Only runs that are, or have been, in this status:
            a run that leaves it is sent once more, with its new status.
        after (str | Unset): Resume after this event id (`Last-Event-ID` wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RunFeedEventType0 | RunFeedEventType1 | RunFeedEventType2 | RunFeedEventType3 | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        status=status,
        after=after,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    repository_id: UUID | Unset = UNSET,
    status: StreamRunEventsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
) -> (
    Error
    | RunFeedEventType0
    | RunFeedEventType1
    | RunFeedEventType2
    | RunFeedEventType3
    | ValidationError
    | None
):
    """Follow the account's runs as they change

     Server-Sent Events: `event: run` with a run's new state (as `GET /v1/runs/{run_id}` shows it) each
    time what the API shows of it changes, `event: deleted` when one is deleted, for the account's runs
    that pass the filters (`repository_id`; `status`: runs that are, or have been, in it, so one that
    leaves it is sent with its new status). Changes are found by each API process (within about 50 ms of
    their commit on a Postgres server, and at least once a second), whichever process or the controller
    made them. On connect `event: ready` (with an `id`) says the stream is live; a client that shows a
    list reads it after that event. Resume with `Last-Event-ID` or `?after=` (an id the stream sent):
    first the current state of every run that changed since, then `ready`, then what changes next;
    nothing is lost, and a run's state may come twice (apply by `run_id`). Over 1,000 changed runs since
    the resume point: `event: reset` (read the list again) instead; also, after `ready`, when over
    10,000 runs changed at once and some were the account's. A stream is dropped when its client still
    has 1 MiB unread when the next event or ping is due (one large batch alone never drops it), and
    ended when the process shuts down; the client then resumes. At most 10 streams per account per API
    process unless the operator set another limit (`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT`); 429
    beyond.

    Scope: `runs:read`.

    Args:
        repository_id (UUID | Unset): Only this repository's runs.
        status (StreamRunEventsStatus | Unset): Only runs that are, or have been, in this status:
            a run that leaves it is sent once more, with its new status.
        after (str | Unset): Resume after this event id (`Last-Event-ID` wins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RunFeedEventType0 | RunFeedEventType1 | RunFeedEventType2 | RunFeedEventType3 | ValidationError
    """

    return (
        await asyncio_detailed(
            client=client,
            repository_id=repository_id,
            status=status,
            after=after,
        )
    ).parsed
