package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// Query sends msg to the standalone agent at agentURL (POST {agentURL}/) and returns its reply.
//
// The request carries the message both under "message" (Fixie's SDK) and at the top level (the simplest agents of
// Fixie's overview read request.json["text"]), plus the session and "stream": true. The reply may be one JSON object
// ({"text": ...} or {"message": {...}}) or JSON lines, each {"message": {...}, "type": ...} holding the whole text so
// far. onPartial, when not nil, is called with that cumulative text as each line arrives, the last call carrying the
// final text; the returned Message is the last line's.
//
// A query is retried only when the agent certainly did not see it (see CallFunc), and it is bounded by the query
// timeout as a whole, the streamed reply included.
func (c *Client) Query(ctx context.Context, agentURL string, msg Message, claims Claims, onPartial func(text string)) (Message, error) {
	x := exchange{op: "query", agent: agentURL, method: http.MethodPost, timeout: c.queryTimeout, claims: claims,
		accept: "application/json, application/x-ndjson"}
	base, err := baseURL(agentURL)
	if err != nil {
		return Message{}, x.fail(ErrInvalid, 0, err, "%v", err)
	}
	x.url = base
	embeds := msg.Embeds
	if embeds == nil {
		embeds = map[string]Embed{}
	}
	x.body, err = json.Marshal(QueryRequest{Session: claims.SessionID, Message: msg, Text: msg.Text, Embeds: embeds, Stream: true})
	if err != nil {
		return Message{}, x.fail(ErrInvalid, 0, err, "encode the message: %v", err)
	}

	resp, cancel, err := c.do(ctx, &x)
	if err != nil {
		return Message{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, err := c.readBody(ctx, &x, resp.Body)
		if err != nil {
			return Message{}, err
		}
		return Message{}, x.statusError(resp.StatusCode, body)
	}

	// One decoder reads both shapes: a single object is a stream of one value.
	limited := &countingReader{r: io.LimitReader(resp.Body, c.maxBody+1)}
	dec := json.NewDecoder(limited)
	var last Message
	lines := 0
	for {
		var reply Reply
		err := dec.Decode(&reply)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Message{}, c.streamError(ctx, &x, resp.StatusCode, limited.n, lines, err)
		}
		lines++
		m, err := x.replyMessage(resp.StatusCode, reply)
		if err != nil {
			return Message{}, err
		}
		last = m
		if onPartial != nil {
			onPartial(m.Text)
		}
	}
	if lines == 0 {
		return Message{}, x.fail(ErrBadResponse, resp.StatusCode, nil, "the reply is empty")
	}
	return last, nil
}

// streamError explains why a streamed reply could not be read to its end.
func (c *Client) streamError(ctx context.Context, x *exchange, status int, read int64, lines int, err error) *Error {
	switch {
	case ctx.Err() != nil:
		return x.contextError(ctx, err)
	case isTimeout(err):
		return x.fail(ErrTimeout, status, err, "the reply stopped arriving: no answer within %s", x.limit.Round(time.Millisecond))
	case read > c.maxBody:
		return x.fail(ErrBadResponse, status, nil, "the reply is larger than %d bytes", c.maxBody)
	}
	return x.fail(ErrBadResponse, status, err, "unreadable reply after %d complete lines: %v", lines, err)
}

// countingReader counts the bytes read through it, to tell a reply cut by the size limit from a malformed one.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
