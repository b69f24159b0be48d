# Seed 000's simplest agent, as the document gives it: Flask, POST / with the query's text and embeds, a reply.
# Run: python3 flask_agent.py PORT
import sys

from flask import Flask, request

app = Flask(__name__)


@app.route("/", methods=["POST"])
def agent():
    query = request.json["text"]
    embeds = request.json["embeds"]
    # Do something with the query...
    return {"text": "Hello, world!"}


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(sys.argv[1]))
