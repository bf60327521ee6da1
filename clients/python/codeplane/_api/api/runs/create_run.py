from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_run import CreateRun
from ...models.error import Error
from ...models.run import Run
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    repository_id: UUID,
    commit_hash: str,
    *,
    body: CreateRun,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/repositories/{repository_id}/{commit_hash}/runs".format(
            repository_id=quote(str(repository_id), safe=""),
            commit_hash=quote(str(commit_hash), safe=""),
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
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    body: CreateRun,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | Run | ValidationError]:
    """Start a run

     Runs `command` (an argv, no shell) in a checkout of the commit, as a Kubernetes Job. The account's
    and repository's environment variables reach the process through a per-run Secret. Give exactly one
    of `command` or `analyzed_experiment`.

    Scope: `runs:write`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Run | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        body=body,
        idempotency_key=idempotency_key,
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
    body: CreateRun,
    idempotency_key: str | Unset = UNSET,
) -> Error | Run | ValidationError | None:
    """Start a run

     Runs `command` (an argv, no shell) in a checkout of the commit, as a Kubernetes Job. The account's
    and repository's environment variables reach the process through a per-run Secret. Give exactly one
    of `command` or `analyzed_experiment`.

    Scope: `runs:write`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Run | ValidationError
    """

    return sync_detailed(
        repository_id=repository_id,
        commit_hash=commit_hash,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    body: CreateRun,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | Run | ValidationError]:
    """Start a run

     Runs `command` (an argv, no shell) in a checkout of the commit, as a Kubernetes Job. The account's
    and repository's environment variables reach the process through a per-run Secret. Give exactly one
    of `command` or `analyzed_experiment`.

    Scope: `runs:write`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Run | ValidationError]
    """

    kwargs = _get_kwargs(
        repository_id=repository_id,
        commit_hash=commit_hash,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    repository_id: UUID,
    commit_hash: str,
    *,
    client: AuthenticatedClient,
    body: CreateRun,
    idempotency_key: str | Unset = UNSET,
) -> Error | Run | ValidationError | None:
    """Start a run

     Runs `command` (an argv, no shell) in a checkout of the commit, as a Kubernetes Job. The account's
    and repository's environment variables reach the process through a per-run Secret. Give exactly one
    of `command` or `analyzed_experiment`.

    Scope: `runs:write`.

    Args:
        repository_id (UUID):
        commit_hash (str): A full or short commit hash, or a branch or tag name, resolved to the
            full hash.
        idempotency_key (str | Unset): Makes the creation safe to retry (1 to 255 printable ASCII
            characters; a UUID is a good choice). Within 24 hours, a request of this account with the
            same key and the same path and body answers `201` with the run the first one created
            (`Idempotent-Replayed: true`), without starting another, even while the first is still
            being created; the same key with another path or body is `409`.
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Run | ValidationError
    """

    return (
        await asyncio_detailed(
            repository_id=repository_id,
            commit_hash=commit_hash,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
