from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.environment_variable import EnvironmentVariable
from ...models.error import Error
from ...models.update_environment_variable import UpdateEnvironmentVariable
from ...models.validation_error import ValidationError
from ...types import UNSET, Response


def _get_kwargs(
    env_var_id: UUID,
    *,
    body: UpdateEnvironmentVariable | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/environment-variables/{env_var_id}".format(
            env_var_id=quote(str(env_var_id), safe=""),
        ),
    }

    if isinstance(body, UpdateEnvironmentVariable):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/json"
    if isinstance(body, UpdateEnvironmentVariable):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/merge-patch+json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvironmentVariable | Error | ValidationError | None:
    if response.status_code == 200:
        response_200 = EnvironmentVariable.from_dict(response.json())

        return response_200

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
) -> Response[EnvironmentVariable | Error | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    env_var_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateEnvironmentVariable | Unset = UNSET,
) -> Response[EnvironmentVariable | Error | ValidationError]:
    """Update an environment variable

     A secret can be made non-secret only together with a new value, so an old secret value is never
    revealed.

    Scope: `env:write`.

    Args:
        env_var_id (UUID):
        body (UpdateEnvironmentVariable):
        body (UpdateEnvironmentVariable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvironmentVariable | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        env_var_id=env_var_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    env_var_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateEnvironmentVariable | Unset = UNSET,
) -> EnvironmentVariable | Error | ValidationError | None:
    """Update an environment variable

     A secret can be made non-secret only together with a new value, so an old secret value is never
    revealed.

    Scope: `env:write`.

    Args:
        env_var_id (UUID):
        body (UpdateEnvironmentVariable):
        body (UpdateEnvironmentVariable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvironmentVariable | Error | ValidationError
    """

    return sync_detailed(
        env_var_id=env_var_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    env_var_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateEnvironmentVariable | Unset = UNSET,
) -> Response[EnvironmentVariable | Error | ValidationError]:
    """Update an environment variable

     A secret can be made non-secret only together with a new value, so an old secret value is never
    revealed.

    Scope: `env:write`.

    Args:
        env_var_id (UUID):
        body (UpdateEnvironmentVariable):
        body (UpdateEnvironmentVariable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvironmentVariable | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        env_var_id=env_var_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    env_var_id: UUID,
    *,
    client: AuthenticatedClient,
    body: UpdateEnvironmentVariable | Unset = UNSET,
) -> EnvironmentVariable | Error | ValidationError | None:
    """Update an environment variable

     A secret can be made non-secret only together with a new value, so an old secret value is never
    revealed.

    Scope: `env:write`.

    Args:
        env_var_id (UUID):
        body (UpdateEnvironmentVariable):
        body (UpdateEnvironmentVariable):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvironmentVariable | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            env_var_id=env_var_id,
            client=client,
            body=body,
        )
    ).parsed
