package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// newHTTPClient is a client of one process: no request of a test may hang it, and idle connections to a process
// that died are not kept for long.
func newHTTPClient() *http.Client {
	return &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64,
		IdleConnTimeout: 5 * time.Second}}
}

// HTTPError is an answer with a status other than 2xx.
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, strings.TrimSpace(e.Body))
}

// StatusOf is the HTTP status of an HTTPError, or 0 for any other error (the request never got an answer).
func StatusOf(err error) int {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

// Do sends a request to the node with a bearer key (none when key is ""), a JSON body (unless in is nil), and
// decodes a 2xx answer into out (unless nil). Other statuses are an *HTTPError.
func (n *Node) Do(ctx context.Context, key, method, path string, in, out any) error {
	return do(ctx, n.hc, key, method, n.URL+path, in, out)
}

func do(ctx context.Context, hc *http.Client, key, method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, url, err)
	}
	if resp.StatusCode/100 != 2 {
		return &HTTPError{Method: method, URL: url, Status: resp.StatusCode, Body: string(raw)}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode %s: %w", method, url, raw, err)
		}
	}
	return nil
}

// GraphQLError is the first error of a GraphQL answer.
type GraphQLError struct {
	Message string
	// Code is extensions.code (NOT_FOUND, TIMEOUT, ...).
	Code string
}

func (e *GraphQLError) Error() string { return e.Code + ": " + e.Message }

// CodeOf is the extensions.code of a GraphQLError, or "" for any other error.
func CodeOf(err error) string {
	var ge *GraphQLError
	if errors.As(err, &ge) {
		return ge.Code
	}
	return ""
}

// GraphQL runs an operation on the node's /graphql and decodes its data into out. An answer with errors is a
// *GraphQLError (or an *HTTPError when the status says so).
func (n *Node) GraphQL(ctx context.Context, key, query string, vars map[string]any, out any) error {
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	err := n.Do(ctx, key, http.MethodPost, "/graphql", map[string]any{"query": query, "variables": vars}, &resp)
	var he *HTTPError
	if errors.As(err, &he) && json.Unmarshal([]byte(he.Body), &resp) == nil && len(resp.Errors) > 0 {
		// A face-level failure keeps its HTTP status; the GraphQL error says what it was.
		return fmt.Errorf("%w (%s)", err, resp.Errors[0].Message)
	}
	if err != nil {
		return err
	}
	if len(resp.Errors) > 0 {
		code, _ := resp.Errors[0].Extensions["code"].(string)
		return &GraphQLError{Message: resp.Errors[0].Message, Code: code}
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			return fmt.Errorf("decode %s: %w", resp.Data, err)
		}
	}
	return nil
}

// Ready asks the node's /readyz: nil when ready, else why not.
func (n *Node) Ready(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return n.Do(rctx, "", http.MethodGet, "/readyz", nil, nil)
}

// WaitReady waits until /readyz answers 200, the process exits, or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	return waitFor(ctx, n.Process, n.Ready)
}

// Healthz asks the server's monitoring /healthz; with jsEnabledOnly, only whether JetStream is enabled (what
// docker-compose.yml's health check asks), else whether this server's JetStream is current with the cluster.
func (s *NATSServer) Healthz(ctx context.Context, jsEnabledOnly bool) error {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := s.MonitorURL() + "/healthz"
	if jsEnabledOnly {
		url += "?js-enabled-only=true"
	}
	return do(rctx, s.hc, "", http.MethodGet, url, nil, nil)
}

// WaitHealthy waits until Healthz passes, the process exits, or ctx ends.
func (s *NATSServer) WaitHealthy(ctx context.Context, jsEnabledOnly bool) error {
	return waitFor(ctx, s.Process, func(ctx context.Context) error { return s.Healthz(ctx, jsEnabledOnly) })
}

func waitFor(ctx context.Context, p *Process, check func(context.Context) error) error {
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-p.Exited():
			return fmt.Errorf("%s exited (%s) before it was ready: last check: %v", p.Name, p.ExitStatus(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ProjectionStatus is a projection as /admin/projections shows it.
type ProjectionStatus struct {
	Name     string `json:"name"`
	Bucket   string `json:"bucket"`
	Applied  uint64 `json:"applied_sequence"`
	Pending  uint64 `json:"pending"`
	Leader   string `json:"leader"`
	CaughtUp bool   `json:"caught_up"`
}

// Projections asks the node where each projection is (`contrail projections status`).
func (c *Cluster) Projections(ctx context.Context, n *Node) ([]ProjectionStatus, error) {
	var out struct {
		Projections []ProjectionStatus `json:"projections"`
	}
	if err := n.Do(ctx, c.AdminKey, http.MethodGet, "/admin/projections", nil, &out); err != nil {
		return nil, err
	}
	return out.Projections, nil
}

// Checkpoint is the sequence a read model's bucket says it has applied up to (its "_checkpoint" key, which
// projections write after every batch), read through the test's own connection: it does not depend on the node's
// own view, nor on any consumer that a failover could leave parked.
func (c *Cluster) Checkpoint(ctx context.Context, bucket string) (uint64, error) {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	kv, err := c.JS.KeyValue(rctx, bucket)
	if err != nil {
		return 0, err
	}
	e, err := kv.Get(rctx, "_checkpoint")
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(string(e.Value()), 10, 64)
}

// StreamState is one server's copy of a stream, as its monitoring endpoint shows it.
type StreamState struct {
	Server   string
	Messages uint64
	LastSeq  uint64
}

// StreamStates asks every running server's /jsz for its copy of the stream.
func (c *Cluster) StreamStates(ctx context.Context, stream string) ([]StreamState, error) {
	var out []StreamState
	for _, s := range c.NATS {
		if !s.Running() {
			continue
		}
		var jsz struct {
			Accounts []struct {
				Streams []struct {
					Name  string `json:"name"`
					State struct {
						Messages uint64 `json:"messages"`
						LastSeq  uint64 `json:"last_seq"`
					} `json:"state"`
				} `json:"stream_detail"`
			} `json:"account_details"`
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := do(rctx, s.hc, "", http.MethodGet, s.MonitorURL()+"/jsz?accounts=true&streams=true", nil, &jsz)
		cancel()
		if err != nil {
			return nil, err
		}
		st := StreamState{Server: s.Name}
		for _, a := range jsz.Accounts {
			for _, d := range a.Streams {
				if d.Name == stream {
					st.Messages, st.LastSeq = d.State.Messages, d.State.LastSeq
				}
			}
		}
		out = append(out, st)
	}
	return out, nil
}
