from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_key_page import ApiKeyPage
from ...models.error import Error
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/auth/keys",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiKeyPage | Error | ValidationError | None:
    if response.status_code == 200:
        response_200 = ApiKeyPage.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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
) -> Response[ApiKeyPage | Error | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[ApiKeyPage | Error | ValidationError]:
    """List API keys

     Live (unrevoked) keys of the account, without their secret. Lists only keys whose scopes are all
    among the calling credential's: the keys it could revoke; a more powerful key (for example a full-
    scope admin key, seen by a `keys:write`-only key) is not shown.

    Scope: `keys:write`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiKeyPage | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> ApiKeyPage | Error | ValidationError | None:
    """List API keys

     Live (unrevoked) keys of the account, without their secret. Lists only keys whose scopes are all
    among the calling credential's: the keys it could revoke; a more powerful key (for example a full-
    scope admin key, seen by a `keys:write`-only key) is not shown.

    Scope: `keys:write`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiKeyPage | Error | ValidationError
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[ApiKeyPage | Error | ValidationError]:
    """List API keys

     Live (unrevoked) keys of the account, without their secret. Lists only keys whose scopes are all
    among the calling credential's: the keys it could revoke; a more powerful key (for example a full-
    scope admin key, seen by a `keys:write`-only key) is not shown.

    Scope: `keys:write`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiKeyPage | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> ApiKeyPage | Error | ValidationError | None:
    """List API keys

     Live (unrevoked) keys of the account, without their secret. Lists only keys whose scopes are all
    among the calling credential's: the keys it could revoke; a more powerful key (for example a full-
    scope admin key, seen by a `keys:write`-only key) is not shown.

    Scope: `keys:write`.

    Args:
        limit (int | Unset):  Default: 20.
        cursor (str | Unset): Where the page starts: the `next_cursor` of the previous page,
            passed back unchanged. An opaque token (base64url; it holds the last id seen, so rows
            added meanwhile never shift the pages). Omit it for the first page. A value outside the
            pattern is a 422 (`string_pattern_mismatch`); a well-formed one that no page returned, a
            422 (`value_error`, `Invalid cursor`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiKeyPage | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
