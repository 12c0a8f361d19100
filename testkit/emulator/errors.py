"""Bot API errors, with the status codes and description texts the real API uses.

A method implementation raises :class:`ApiError`; the HTTP layer turns it into
``{"ok": false, "error_code": ..., "description": ..., "parameters": ...}``, which
python-telegram-bot maps onto ``Forbidden``, ``BadRequest``, ``RetryAfter`` and so on.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "bad_request",
    "conflict",
    "forbidden",
    "not_found",
    "too_many_requests",
    "unauthorized",
]

#: The description Telegram uses for a bare error code (``inject_error`` defaults).
DEFAULT_DESCRIPTIONS: dict[int, str] = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    500: "Internal Server Error",
    502: "Bad Gateway",
}

MESSAGE_NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
CANT_INITIATE = "bot can't initiate conversation with a user"
BLOCKED = "bot was blocked by the user"
USER_DEACTIVATED = "user is deactivated"


class ApiError(Exception):
    """An error response of the Bot API."""

    def __init__(
        self, code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code} {description}")
        self.code = code
        self.description = description
        self.parameters = parameters

    def payload(self) -> dict[str, Any]:
        """The JSON body Telegram answers with."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def bad_request(detail: str) -> ApiError:
    """``400 Bad Request: <detail>``."""
    return ApiError(400, f"Bad Request: {detail}")


def forbidden(detail: str) -> ApiError:
    """``403 Forbidden: <detail>``."""
    return ApiError(403, f"Forbidden: {detail}")


def conflict(detail: str) -> ApiError:
    """``409 Conflict: <detail>``."""
    return ApiError(409, f"Conflict: {detail}")


def unauthorized() -> ApiError:
    """``401 Unauthorized`` (a well-formed token the server does not know)."""
    return ApiError(401, "Unauthorized")


def not_found() -> ApiError:
    """``404 Not Found`` (unknown method, malformed token)."""
    return ApiError(404, "Not Found")


def too_many_requests(retry_after: int) -> ApiError:
    """``429 Too Many Requests: retry after N`` with ``parameters.retry_after``."""
    return ApiError(
        429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
    )
