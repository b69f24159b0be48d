package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// subscription is one GraphQL subscription over a websocket, in the graphql-transport-ws protocol: the data of
// each result arrives on Next, which is closed when the subscription ends (then Err says why).
type subscription struct {
	Next   <-chan json.RawMessage
	conn   *websocket.Conn
	cancel context.CancelFunc
	err    error
}

// wsMessage is a message of graphql-transport-ws.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe opens a websocket to the node's GraphQL face, authenticates in connection_init and starts one
// subscription. It returns once the node accepted the connection.
func (c *client) subscribe(ctx context.Context, query string, vars map[string]any) (*subscription, error) {
	url := "ws" + strings.TrimPrefix(c.base, "http") + "/graphql"
	ctx, cancel := context.WithCancel(ctx)
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader: http.Header{"Authorization": {"Bearer " + c.key}}})
	if err != nil {
		cancel()
		if resp != nil && resp.StatusCode/100 == 4 {
			return nil, c.refused("GET", "/graphql (websocket)", resp.StatusCode, resp.Status)
		}
		return nil, fmt.Errorf("open a websocket to %s: %w (is `contrail serve` running there?)", url, err)
	}
	conn.SetReadLimit(16 << 20)
	fail := func(err error) (*subscription, error) {
		cancel()
		_ = conn.Close(websocket.StatusNormalClosure, "")
		return nil, err
	}
	init, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + c.key})
	if err := wsjson.Write(ctx, conn, wsMessage{Type: "connection_init", Payload: init}); err != nil {
		return fail(fmt.Errorf("subscribe: %w", err))
	}
	var ack wsMessage
	if err := wsjson.Read(ctx, conn, &ack); err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return fail(fmt.Errorf("the node refused the connection: %s", ce.Reason))
		}
		return fail(fmt.Errorf("subscribe: %w", err))
	}
	if ack.Type != "connection_ack" {
		return fail(fmt.Errorf("subscribe: the node answered %q to connection_init", ack.Type))
	}
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err := wsjson.Write(ctx, conn, wsMessage{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		return fail(fmt.Errorf("subscribe: %w", err))
	}
	next := make(chan json.RawMessage, 1024)
	s := &subscription{Next: next, conn: conn, cancel: cancel}
	go s.read(ctx, next)
	return s, nil
}

// read hands each result's data to next until the subscription ends.
func (s *subscription) read(ctx context.Context, next chan<- json.RawMessage) {
	defer close(next)
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, s.conn, &m); err != nil {
			if ctx.Err() == nil {
				s.err = fmt.Errorf("lost the live connection to the node: %w", err)
			}
			return
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, s.conn, wsMessage{Type: "pong"})
		case "next":
			var r struct {
				Data   json.RawMessage `json:"data"`
				Errors []struct {
					Message string `json:"message"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				s.err = fmt.Errorf("read a subscription result: %w", err)
				return
			}
			if len(r.Errors) > 0 {
				s.err = errors.New(r.Errors[0].Message)
				return
			}
			select {
			case next <- r.Data:
			case <-ctx.Done():
				return
			}
		case "error":
			var errs []struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(m.Payload, &errs)
			s.err = errors.New("the node refused the subscription")
			if len(errs) > 0 {
				s.err = errors.New(errs[0].Message)
			}
			return
		case "complete":
			return
		}
	}
}

// Err says why the subscription ended (nil: it was closed, or the node completed it).
func (s *subscription) Err() error { return s.err }

// Close ends the subscription.
func (s *subscription) Close() {
	s.cancel()
	_ = s.conn.Close(websocket.StatusNormalClosure, "")
}
