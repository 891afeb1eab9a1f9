"""The web monitor's one secret: a random token, required on every request for the run.

A page request (``/?token=...``, as Jupyter prints its URL) must carry the token; the
page's websocket cannot carry a query argument, so it is let in by the session token bokeh
put in that page, signed with this server's own random key (``sign_sessions``): only a
holder of the URL's token ever got one.  Both checks run in the request's ``prepare``,
before any handler or websocket upgrade, so a request without them gets a plain 403.
bokeh's static files (its JavaScript library, nothing of the run) are served to anyone.
"""

from __future__ import annotations

import hmac
import secrets

from bokeh.server.auth_provider import AuthProvider
from bokeh.server.views.ws import WSHandler
from bokeh.util.token import check_token_signature
from tornado.web import HTTPError, RequestHandler

__all__ = ["TokenAuth", "new_token"]

#: who a request is, once its token checked out (bokeh only needs it to be non-empty)
USER = "swiftnb-monitor"


def new_token() -> str:
    """A fresh random token (48 hex digits, as long as Jupyter's)."""
    return secrets.token_hex(24)


def _session_token(handler: RequestHandler) -> str | None:
    """The session token a bokeh page's websocket offers: ``Sec-WebSocket-Protocol:
    bokeh, TOKEN``."""
    offered = [p.strip() for p in handler.request.headers.get(
        "Sec-WebSocket-Protocol", "").split(",")]
    return offered[1] if len(offered) == 2 and offered[0] == "bokeh" else None


class TokenAuth(AuthProvider):
    """bokeh's authentication hooks for one token and one session-signing key."""

    def __init__(self, token: str, secret_key: bytes) -> None:
        self.token = token
        self.secret_key = secret_key
        super().__init__()

    def allows(self, handler: RequestHandler) -> bool:
        """Whether the request carries the token (or, for the websocket, a signed
        session token from a page that did)."""
        if isinstance(handler, WSHandler):
            session = _session_token(handler)
            try:
                return session is not None and check_token_signature(
                    session, secret_key=self.secret_key, signed=True)
            except (ValueError, KeyError, TypeError):  # not a bokeh token (it decodes it)
                return False
        given = handler.get_query_argument("token", "")
        return hmac.compare_digest(given.encode(), self.token.encode())

    @property
    def get_user_async(self):  # bokeh reads the hooks as properties
        async def user(handler: RequestHandler) -> str:
            if not self.allows(handler):
                raise HTTPError(403, reason="swiftnb monitor: the URL's token is required")
            return USER

        return user

    @property
    def get_login_url(self):
        def refuse(handler: RequestHandler) -> str:
            raise HTTPError(403, reason="swiftnb monitor: the URL's token is required")

        return refuse
