from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.git_hub_install_callback_setup_action import (
    GitHubInstallCallbackSetupAction,
)
from ...models.validation_error import ValidationError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    installation_id: int | Unset = UNSET,
    setup_action: GitHubInstallCallbackSetupAction | Unset = UNSET,
    state: str,
    code: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["installation_id"] = installation_id

    json_setup_action: str | Unset = UNSET
    if not isinstance(setup_action, Unset):
        json_setup_action = setup_action.value

    params["setup_action"] = json_setup_action

    params["state"] = state

    params["code"] = code

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/integrations/github/callback",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | ValidationError | None:
    if response.status_code == 302:
        response_302 = cast(Any, None)
        return response_302

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

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
) -> Response[Any | Error | ValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    installation_id: int | Unset = UNSET,
    setup_action: GitHubInstallCallbackSetupAction | Unset = UNSET,
    state: str,
    code: str | Unset = UNSET,
) -> Response[Any | Error | ValidationError]:
    """GitHub App setup callback

     The GitHub App's Setup URL (`{CODEPLANE_PUBLIC_URL}/v1/integrations/github/callback`), opened by the
    person's browser after installing: no bearer token, `state` is the authentication. Verifies `state`
    (signature, expiry), checks the installation through GitHub's API (it must be this App's, and
    created or changed after the state was issued), records the integration for the state's account and
    redirects to the dashboard: `/ui/integrations/{integration_id}`, or
    `/ui/integrations?status=pending` when an organization owner still has to approve
    (`setup_action=request`, no `installation_id`). Connecting again an installation the account already
    has updates it.

    Args:
        installation_id (int | Unset): Set by GitHub; absent when an organization owner still has
            to approve the installation.
        setup_action (GitHubInstallCallbackSetupAction | Unset):
        state (str):
        code (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        installation_id=installation_id,
        setup_action=setup_action,
        state=state,
        code=code,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    installation_id: int | Unset = UNSET,
    setup_action: GitHubInstallCallbackSetupAction | Unset = UNSET,
    state: str,
    code: str | Unset = UNSET,
) -> Any | Error | ValidationError | None:
    """GitHub App setup callback

     The GitHub App's Setup URL (`{CODEPLANE_PUBLIC_URL}/v1/integrations/github/callback`), opened by the
    person's browser after installing: no bearer token, `state` is the authentication. Verifies `state`
    (signature, expiry), checks the installation through GitHub's API (it must be this App's, and
    created or changed after the state was issued), records the integration for the state's account and
    redirects to the dashboard: `/ui/integrations/{integration_id}`, or
    `/ui/integrations?status=pending` when an organization owner still has to approve
    (`setup_action=request`, no `installation_id`). Connecting again an installation the account already
    has updates it.

    Args:
        installation_id (int | Unset): Set by GitHub; absent when an organization owner still has
            to approve the installation.
        setup_action (GitHubInstallCallbackSetupAction | Unset):
        state (str):
        code (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | ValidationError
    """

    return sync_detailed(
        client=client,
        installation_id=installation_id,
        setup_action=setup_action,
        state=state,
        code=code,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    installation_id: int | Unset = UNSET,
    setup_action: GitHubInstallCallbackSetupAction | Unset = UNSET,
    state: str,
    code: str | Unset = UNSET,
) -> Response[Any | Error | ValidationError]:
    """GitHub App setup callback

     The GitHub App's Setup URL (`{CODEPLANE_PUBLIC_URL}/v1/integrations/github/callback`), opened by the
    person's browser after installing: no bearer token, `state` is the authentication. Verifies `state`
    (signature, expiry), checks the installation through GitHub's API (it must be this App's, and
    created or changed after the state was issued), records the integration for the state's account and
    redirects to the dashboard: `/ui/integrations/{integration_id}`, or
    `/ui/integrations?status=pending` when an organization owner still has to approve
    (`setup_action=request`, no `installation_id`). Connecting again an installation the account already
    has updates it.

    Args:
        installation_id (int | Unset): Set by GitHub; absent when an organization owner still has
            to approve the installation.
        setup_action (GitHubInstallCallbackSetupAction | Unset):
        state (str):
        code (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | ValidationError]
    """

    kwargs = _get_kwargs(
        installation_id=installation_id,
        setup_action=setup_action,
        state=state,
        code=code,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    installation_id: int | Unset = UNSET,
    setup_action: GitHubInstallCallbackSetupAction | Unset = UNSET,
    state: str,
    code: str | Unset = UNSET,
) -> Any | Error | ValidationError | None:
    """GitHub App setup callback

     The GitHub App's Setup URL (`{CODEPLANE_PUBLIC_URL}/v1/integrations/github/callback`), opened by the
    person's browser after installing: no bearer token, `state` is the authentication. Verifies `state`
    (signature, expiry), checks the installation through GitHub's API (it must be this App's, and
    created or changed after the state was issued), records the integration for the state's account and
    redirects to the dashboard: `/ui/integrations/{integration_id}`, or
    `/ui/integrations?status=pending` when an organization owner still has to approve
    (`setup_action=request`, no `installation_id`). Connecting again an installation the account already
    has updates it.

    Args:
        installation_id (int | Unset): Set by GitHub; absent when an organization owner still has
            to approve the installation.
        setup_action (GitHubInstallCallbackSetupAction | Unset):
        state (str):
        code (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | ValidationError
    """

    return (
        await asyncio_detailed(
            client=client,
            installation_id=installation_id,
            setup_action=setup_action,
            state=state,
            code=code,
        )
    ).parsed
