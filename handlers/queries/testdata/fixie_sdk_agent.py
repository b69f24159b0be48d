# An agent that checks the platform's tokens the way the Fixie SDK (fixieai 1.0.4) does, with PyJWT: the keys come
# from $FIXIE_API_URL/.well-known/jwks.json, the token must be EdDSA and name one of the SDK's audiences, and its
# "aid" must be $FIXIE_ALLOWED_AGENT_ID. As in the SDK, a token PyJWT cannot decode is a 403 {"detail": "Invalid
# token"}, and any other failure of the check (keys that cannot be fetched, another audience) a bare 500.
# Its func genrand answers 23 and, with the same token, stores it in user storage under the agent's "aid", as the
# SDK's UserStorage does.
# Run: python3 fixie_sdk_agent.py PORT  (stdlib and python3-jwt only)
import json
import os
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

API = os.environ["FIXIE_API_URL"]
ALLOWED = os.environ.get("FIXIE_ALLOWED_AGENT_ID")
AUDIENCES = ["https://app.fixie.ai/api", "https://app.dev.fixie.ai/api"]
KEYS = jwt.PyJWKClient(API + "/.well-known/jwks.json")

DESCRIPTION = {
    "base_prompt": "I am a simple agent that generates a random number between two given values.",
    "few_shots": [
        "Q: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\n"
        "A: The random number is 17."
    ],
    "conversational": False,
}


class Refused(Exception):
    pass


def check(header):
    """Returns the verified token, raises Refused for a token to refuse, anything else for a bare 500."""
    if not header.startswith("Bearer "):
        raise Refused("Not authenticated")
    token = header[len("Bearer "):]
    try:
        key = KEYS.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["EdDSA"], audience=AUDIENCES)
    except jwt.DecodeError:
        raise Refused("Invalid token")
    if not isinstance(claims.get("aid"), str):
        raise Refused("Invalid token")
    if ALLOWED is not None and claims["aid"] != ALLOWED:
        raise Refused("Invalid token")
    return token, claims


class Agent(BaseHTTPRequestHandler):
    def answer(self, status, body, content_type="application/json"):
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def handle_checked(self, then):
        try:
            token, claims = check(self.headers.get("Authorization", ""))
            then(token, claims)
        except Refused as e:
            self.answer(403, {"detail": str(e)})
        except Exception as e:  # what the SDK's server does with an exception it does not handle
            sys.stderr.write("agent: %r\n" % e)
            self.answer(500, "Internal Server Error", "text/plain; charset=utf-8")

    def do_GET(self):
        self.handle_checked(lambda token, claims: self.answer(200, DESCRIPTION))

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)

        def genrand(token, claims):
            if self.path != "/genrand":
                self.answer(404, {"message": {"text": "no such func"}, "error": {"code": "ERR_FUNC_NOT_DEFINED"}})
                return
            store = urllib.request.Request(
                API + "/api/userstorage/" + claims["aid"] + "/last",
                data=json.dumps({"data": json.dumps("23")}).encode(),
                headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
                method="POST",
            )
            urllib.request.urlopen(store, timeout=10).read()
            self.answer(200, {"message": {"text": "23"}})

        self.handle_checked(genrand)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Agent).serve_forever()
