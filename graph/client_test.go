package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// gqlError is a GraphQL error as a client reads it.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

func (e gqlError) code() string { s, _ := e.Extensions["code"].(string); return s }

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// client speaks GraphQL over HTTP POST, as Fixie's SDK did.
type client struct {
	t   *testing.T
	n   *platformtest.Node
	key string
}

func (c client) post(query string, vars map[string]any) (gqlResponse, int) {
	c.t.Helper()
	resp := c.n.Do(c.t, c.key, "POST", "/graphql", map[string]any{"query": query, "variables": vars})
	var out gqlResponse
	resp.JSON(c.t, &out)
	return out, resp.Status
}

// do runs an operation that must succeed and decodes its data into v.
func (c client) do(query string, vars map[string]any, v any) {
	c.t.Helper()
	out, status := c.post(query, vars)
	if status != 200 || len(out.Errors) > 0 {
		c.t.Fatalf("%s: status %d, errors %+v", firstLine(query), status, out.Errors)
	}
	if v != nil {
		if err := json.Unmarshal(out.Data, v); err != nil {
			c.t.Fatalf("decode %s: %v", out.Data, err)
		}
	}
}

// fail runs an operation that must fail with a GraphQL error of the given code, and returns the error.
func (c client) fail(query string, vars map[string]any, code string) gqlError {
	c.t.Helper()
	out, _ := c.post(query, vars)
	if len(out.Errors) == 0 {
		c.t.Fatalf("%s: succeeded (%s), want %s", firstLine(query), out.Data, code)
	}
	e := out.Errors[0]
	if e.code() != code {
		c.t.Fatalf("%s: error %q with code %q, want %s", firstLine(query), e.Message, e.code(), code)
	}
	if strings.Contains(e.Message, "internal error") {
		c.t.Fatalf("%s: message %q is not clear", firstLine(query), e.Message)
	}
	return e
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return s
}

// The two websocket protocols gqlgen speaks.
const (
	transportWS = "graphql-transport-ws"
	legacyWS    = "graphql-ws"
)

// frame is a message of either protocol.
type frame struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsClient is a real websocket client of /graphql, writing the frames of graphql-transport-ws or graphql-ws.
type wsClient struct {
	t     *testing.T
	conn  *websocket.Conn
	proto string
	// frames carries what the reader goroutine received, keep-alives left out.
	frames chan frame
	closed chan error
}

// dialWS opens a websocket with the given protocol and sends connection_init with the payload (nil = none). It
// returns the client and the first frame the server answered with (connection_ack, or connection_error), or the
// close error if the server closed the socket.
func dialWS(t *testing.T, n *platformtest.Node, proto string, init map[string]any) (*wsClient, frame, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(n.URL, "http") + "/graphql"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{proto}})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	conn.SetReadLimit(4 << 20)
	c := &wsClient{t: t, conn: conn, proto: proto, frames: make(chan frame, 1024), closed: make(chan error, 1)}
	t.Cleanup(func() { _ = conn.CloseNow() })
	go c.read()
	c.send(frame{Type: "connection_init", Payload: mustJSON(init)})
	select {
	case f := <-c.frames:
		return c, f, nil
	case err := <-c.closed:
		return c, frame{}, err
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to connection_init")
	}
	return c, frame{}, nil
}

// connect opens an authenticated websocket and checks the server acknowledged it.
func connect(t *testing.T, n *platformtest.Node, proto, key string) *wsClient {
	t.Helper()
	c, first, err := dialWS(t, n, proto, map[string]any{"Authorization": "Bearer " + key})
	if err != nil || first.Type != "connection_ack" {
		t.Fatalf("connection_init: got %+v, %v; want connection_ack", first, err)
	}
	return c
}

func (c *wsClient) read() {
	for {
		var f frame
		if err := wsjson.Read(context.Background(), c.conn, &f); err != nil {
			c.closed <- err
			close(c.frames)
			return
		}
		switch f.Type {
		case "ka", "pong":
			continue
		case "ping":
			c.send(frame{Type: "pong"})
			continue
		}
		c.frames <- f
	}
}

func (c *wsClient) send(f frame) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wsjson.Write(ctx, c.conn, f); err != nil {
		c.t.Errorf("websocket write %s: %v", f.Type, err)
	}
}

// subscribe starts an operation under id.
func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	typ := "subscribe"
	if c.proto == legacyWS {
		typ = "start"
	}
	c.send(frame{ID: id, Type: typ, Payload: mustJSON(map[string]any{"query": query, "variables": vars})})
}

// stop ends an operation.
func (c *wsClient) stop(id string) {
	typ := "complete"
	if c.proto == legacyWS {
		typ = "stop"
	}
	c.send(frame{ID: id, Type: typ})
}

// subscription collects one operation's results, routed from the connection's frames.
type subscription struct {
	data chan json.RawMessage
	errs chan []gqlError
}

// router fans a connection's frames out to its subscriptions by ID.
func (c *wsClient) route(ids ...string) map[string]*subscription {
	subs := map[string]*subscription{}
	for _, id := range ids {
		subs[id] = &subscription{data: make(chan json.RawMessage, 1024), errs: make(chan []gqlError, 4)}
	}
	go func() {
		for f := range c.frames {
			s := subs[f.ID]
			if s == nil {
				continue
			}
			switch f.Type {
			case "next", "data":
				var r gqlResponse
				if err := json.Unmarshal(f.Payload, &r); err != nil {
					continue
				}
				if len(r.Errors) > 0 {
					s.errs <- r.Errors
					continue
				}
				s.data <- r.Data
			case "error":
				var es []gqlError
				if json.Unmarshal(f.Payload, &es) != nil {
					var one gqlError
					_ = json.Unmarshal(f.Payload, &one)
					es = []gqlError{one}
				}
				s.errs <- es
			}
		}
	}()
	return subs
}

// next waits for the subscription's next result and decodes it into v.
func (s *subscription) next(t *testing.T, v any) {
	t.Helper()
	select {
	case d := <-s.data:
		if err := json.Unmarshal(d, v); err != nil {
			t.Fatalf("decode %s: %v", d, err)
		}
	case es := <-s.errs:
		t.Fatalf("subscription error: %+v", es)
	case <-time.After(20 * time.Second):
		t.Fatal("no result from the subscription within 20s")
	}
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %v: %v", v, err))
	}
	return b
}
