// Errors of the OAuth endpoints, answered with the RFC 6749 body
// {"error": "...", "error_description": "..."} (RFC 7591 and RFC 8707 add their
// own codes) instead of the API's {"detail": ...}: OAuth clients read these.

export class OAuthProblem extends Error {
  readonly error: string;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(error: string, description: string, status = 400, headers: Record<string, string> = {}) {
    super(description);
    this.name = "OAuthProblem";
    this.error = error;
    this.status = status;
    this.headers = headers;
  }

  get body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidRequest = (d: string) => new OAuthProblem("invalid_request", d);
export const invalidClient = (d: string, basic = false) =>
  new OAuthProblem("invalid_client", d, 401, basic ? { "WWW-Authenticate": 'Basic realm="codeplane", charset="UTF-8"' } : {});
export const invalidClientMetadata = (d: string) => new OAuthProblem("invalid_client_metadata", d);
export const invalidRedirectUri = (d: string) => new OAuthProblem("invalid_redirect_uri", d);
