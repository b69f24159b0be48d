// Package client is Contrail as an MCP client: it lists the tools of a remote MCP server and calls them, over
// streamable HTTP with the official Go SDK, for the Responses API's mcp tool. Egress is closed by default: only
// the hosts the operator lists (serve's --mcp-hosts, the allow-list of internal/apicall) are called, a redirect
// must stay among them, and no connection reaches a link-local or metadata address, whatever name led there.
// Every call is bounded by its context (a default deadline when it has none): a server that hangs or fails is an
// error, never a wait without end. The headers a caller gives (tokens) are sent and never logged, nor quoted in an
// error.
//
// It imports internal/apicall and internal/errs; nothing of the log, the faces or the handlers.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/errs"
)

// Hosts is the flag that lists the MCP servers Contrail may call.
func Hosts() apicall.HostsFlag {
	return apicall.HostsFlag{For: "MCP servers", Flag: "--mcp-hosts", Env: "CONTRAIL_MCP_HOSTS"}
}

// ParseHosts reads the operator's --mcp-hosts.
func ParseHosts(values []string) (apicall.Hosts, error) {
	return apicall.ParseHostsFor(Hosts(), values)
}

// DefaultTimeout bounds a call whose context has no deadline.
const DefaultTimeout = 60 * time.Second

// Server is a remote MCP server as a request names it.
type Server struct {
	URL string
	// Headers are sent with every request to the server (an Authorization token, say); never logged.
	Headers map[string]string
}

// Tool is a tool a server lists.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Result is what a tool call gave: its text, and whether the tool said it failed.
type Result struct {
	Output  string
	IsError bool
}

// Client calls the allowed MCP servers.
type Client struct {
	hosts  apicall.Hosts
	http   *http.Client
	logger *slog.Logger
}

// Option changes a client.
type Option func(*Client)

// WithLogger logs each exchange's server, method and duration (never its headers).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.logger = l } }

// New returns a client that calls the allowed hosts only.
func New(hosts apicall.Hosts, opts ...Option) *Client {
	c := &Client{hosts: hosts, http: &http.Client{Transport: apicall.Transport(), CheckRedirect: hosts.CheckRedirect},
		logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Check refuses a server URL no call may go to, as a 400 naming field, before any request is made.
func (c *Client) Check(field, serverURL string) error { return c.hosts.Check(field, serverURL) }

// ListTools lists the server's tools with their input schemas.
func (c *Client) ListTools(ctx context.Context, srv Server) ([]Tool, error) {
	var out []Tool
	err := c.session(ctx, srv, "tools/list", func(ctx context.Context, s *mcp.ClientSession) error {
		for t, err := range s.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			schema, err := json.Marshal(t.InputSchema)
			if err != nil || string(schema) == "null" {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			tool := Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
			if t.Annotations != nil {
				tool.Annotations, _ = json.Marshal(t.Annotations)
			}
			out = append(out, tool)
		}
		return nil
	})
	return out, err
}

// CallTool calls one tool with arguments (a JSON object). A tool that reports a failure is a Result with IsError,
// not an error: errors are the exchange's (refused, unreachable, timed out, the server's own failure).
func (c *Client) CallTool(ctx context.Context, srv Server, name string, args json.RawMessage) (Result, error) {
	var res Result
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return res, errs.InvalidField("arguments", "the arguments of %s are not a JSON object", name)
	}
	err := c.session(ctx, srv, "tools/call "+name, func(ctx context.Context, s *mcp.ClientSession) error {
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: obj})
		if err != nil {
			return err
		}
		res = Result{Output: resultText(r), IsError: r.IsError}
		return nil
	})
	return res, err
}

// resultText is a tool result as text: its text parts, or its structured content, or each part as JSON.
func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, x.Text)
		default:
			raw, _ := json.Marshal(x)
			parts = append(parts, string(raw))
		}
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		raw, _ := json.Marshal(r.StructuredContent)
		return string(raw)
	}
	return strings.Join(parts, "\n")
}

// session connects to the server (initialize), does one thing and closes. The URL is checked first: a refused
// one makes no request at all.
func (c *Client) session(ctx context.Context, srv Server, what string, do func(context.Context, *mcp.ClientSession) error) error {
	if err := c.Check("server_url", srv.URL); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	start := time.Now()
	client := mcp.NewClient(&mcp.Implementation{Name: "contrail", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: c.withHeaders(srv.URL, srv.Headers),
		MaxRetries: -1, DisableStandaloneSSE: true}
	s, err := client.Connect(ctx, tr, nil)
	if err == nil {
		if err = do(ctx, s); err != nil {
			// Closing says goodbye to the server (a DELETE, bounded by the SDK at a few seconds), which a server
			// still busy with the call that failed may hold up: the caller does not wait for it.
			go func() { _ = s.Close() }()
		} else {
			_ = s.Close()
		}
	}
	host := hostOf(srv.URL)
	c.logger.Debug("mcp exchange", "server", host, "what", what, "ms", time.Since(start).Milliseconds(), "ok", err == nil)
	if err != nil {
		return c.failure(ctx, host, what, err, srv.Headers)
	}
	return nil
}

// failure turns an exchange's error into one a user can read, without the headers' values in it.
func (c *Client) failure(ctx context.Context, host, what string, err error, headers map[string]string) error {
	if e := errs.As(err); e != nil {
		return err
	}
	msg := redact(err.Error(), headers)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		return &errs.Error{Code: errs.DeadlineExpired, Message: fmt.Sprintf("MCP server %s did not answer %s in time", host, what)}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &errs.Error{Code: errs.Unavailable, Message: fmt.Sprintf("MCP server %s: %s failed: %s", host, what, clip(msg))}
}

// redact removes the headers' values from a message.
func redact(msg string, headers map[string]string) string {
	for _, v := range headers {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
			msg = strings.ReplaceAll(msg, tok, "[redacted]")
		}
	}
	return msg
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

func hostOf(raw string) string {
	s := raw
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

// withHeaders is the client's HTTP client sending headers with every request to the server's own scheme and host:
// a redirect to another allowed host, or from https to http, does not carry them (apicall.HeadersFor).
func (c *Client) withHeaders(serverURL string, h map[string]string) *http.Client {
	u, err := url.Parse(serverURL)
	if len(h) == 0 || err != nil {
		// A server URL that does not parse is refused before any request: it is sent no headers either way.
		return c.http
	}
	hc := *c.http
	hc.Transport = apicall.HeadersFor(u, h, c.http.Transport)
	return &hc
}
