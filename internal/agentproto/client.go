package agentproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"
)

// Claims say on whose behalf a call is made. A TokenSource turns them into the bearer token the agent verifies.
type Claims struct {
	// User is the user the call is made for ("sub"); empty means anonymous.
	User string
	// AgentID is the agent the token is meant for, by its Contrail ID ("agt").
	AgentID string
	// AgentName is the agent as Fixie named it, "<username>/<handle>" ("aid"): agents built with the Fixie SDK
	// check it against FIXIE_ALLOWED_AGENT_ID. Empty means AgentID.
	AgentName string
	// SessionID is the session the call belongs to, if any.
	SessionID string
	// Audience is who the token is for ("aud"): the platform's API URL, as in Fixie. When empty, the Client fills
	// in the audience it was configured with.
	Audience string
}

// TokenSource mints the bearer token sent with every call (an EdDSA JWT that the agent verifies against the
// platform's JWKS).
type TokenSource interface {
	AgentToken(ctx context.Context, c Claims) (string, error)
}

// Client calls agents over HTTP. It is safe for concurrent use.
type Client struct {
	http         *http.Client
	tokens       TokenSource
	audience     string
	timeout      time.Duration
	queryTimeout time.Duration
	maxAttempts  int
	backoff      time.Duration
	maxBody      int64
	log          *slog.Logger
}

// Defaults of a Client.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultQueryTimeout = 2 * time.Minute
	DefaultMaxAttempts  = 3
	DefaultRetryBackoff = 200 * time.Millisecond
	DefaultMaxBodyBytes = 16 << 20

	maxBackoff = 2 * time.Second
)

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (its transport, proxies, TLS). Its Timeout, if any, applies on top of the
// Client's own per-call timeouts.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTokenSource sets where tokens come from. Without one, calls carry no Authorization header, which only agents
// that do not verify tokens accept.
func WithTokenSource(ts TokenSource) Option { return func(c *Client) { c.tokens = ts } }

// WithAudience sets the audience put in Claims that have none: the platform's API URL.
func WithAudience(aud string) Option { return func(c *Client) { c.audience = aud } }

// WithTimeout bounds a metadata fetch or a func call, retries included (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithQueryTimeout bounds a query to a standalone agent, the whole streamed reply included (default
// DefaultQueryTimeout).
func WithQueryTimeout(d time.Duration) Option { return func(c *Client) { c.queryTimeout = d } }

// WithMaxAttempts bounds how many times a call is sent when a retry is safe (default DefaultMaxAttempts; 1 turns
// retries off).
func WithMaxAttempts(n int) Option { return func(c *Client) { c.maxAttempts = max(n, 1) } }

// WithRetryBackoff sets the wait before the first retry; it doubles for each further one, up to 2s.
func WithRetryBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }

// WithMaxBodyBytes bounds the size of a reply (default DefaultMaxBodyBytes; embeds sent as data: URIs make replies
// large).
func WithMaxBodyBytes(n int64) Option { return func(c *Client) { c.maxBody = n } }

// WithLogger sets where retries are logged (at debug level). The default discards.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// NewClient returns a Client with the defaults above, changed by opts.
func NewClient(opts ...Option) *Client {
	c := &Client{
		timeout:      DefaultTimeout,
		queryTimeout: DefaultQueryTimeout,
		maxAttempts:  DefaultMaxAttempts,
		backoff:      DefaultRetryBackoff,
		maxBody:      DefaultMaxBodyBytes,
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// CallFunc calls func fn of the Code Shot agent at agentURL: POST {agentURL}/{fn} with {"message": msg}. It returns
// the agent's reply message; an agent that answers with an "error" object fails with ErrAgentError even on HTTP 200.
//
// A func may have side effects, so a call is repeated only when the agent certainly did not act on it: the
// connection was refused before the request was sent, or a proxy in front of the agent answered 502 or 503 (a
// tunnel or load balancer whose agent is not up). A timeout or a 500 is never retried: the func may have run.
func (c *Client) CallFunc(ctx context.Context, agentURL, fn string, msg Message, claims Claims) (Message, error) {
	x := exchange{op: "call func", agent: agentURL, fn: fn, method: http.MethodPost, timeout: c.timeout, claims: claims}
	if !isWord(fn) {
		return Message{}, x.fail(ErrInvalid, 0, nil, "func name %q is not a word (letters, digits, underscore)", fn)
	}
	base, err := baseURL(agentURL)
	if err != nil {
		return Message{}, x.fail(ErrInvalid, 0, err, "%v", err)
	}
	x.url = base + url.PathEscape(fn)
	x.body, err = json.Marshal(FuncRequest{Message: msg})
	if err != nil {
		return Message{}, x.fail(ErrInvalid, 0, err, "encode the message: %v", err)
	}

	resp, cancel, err := c.do(ctx, &x)
	if err != nil {
		return Message{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := c.readBody(ctx, &x, resp.Body)
	if err != nil {
		return Message{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Message{}, x.statusError(resp.StatusCode, body)
	}
	var reply Reply
	if err := json.Unmarshal(body, &reply); err != nil {
		return Message{}, x.fail(ErrBadResponse, resp.StatusCode, err, "the reply is not JSON (%v): %s", err, snippet(body))
	}
	return x.replyMessage(resp.StatusCode, reply)
}

// exchange is one logical call, however many times it is sent.
type exchange struct {
	op, agent, fn string
	method, url   string
	accept        string
	body          []byte
	claims        Claims
	// platform is the platform's URL (the Client's audience), for advice in errors.
	platform string
	timeout  time.Duration
	// limit is the time the call actually had: the timeout, or less when the caller's deadline came first.
	limit time.Duration
}

// subject names the call at the start of a message: `call func "calc" of agent at http://...`.
func (x *exchange) subject() string {
	if x.fn != "" {
		return fmt.Sprintf("%s %q of agent at %s", x.op, x.fn, x.agent)
	}
	if x.op == "fetch metadata" {
		return "fetch metadata from agent at " + x.agent
	}
	return x.op + " agent at " + x.agent
}

// fail returns an *Error whose message is the call's subject followed by what went wrong.
func (x *exchange) fail(kind error, status int, cause error, format string, args ...any) *Error {
	return x.newError(kind, status, cause, x.subject()+": "+fmt.Sprintf(format, args...))
}

func (x *exchange) newError(kind error, status int, cause error, message string) *Error {
	return &Error{Kind: kind, Op: x.op, Agent: x.agent, Func: x.fn, Status: status, Err: cause, Message: message}
}

// do sends the request, retrying only what is safe (see CallFunc). On success the caller must close the body and
// then call cancel, which ends the call's deadline.
func (c *Client) do(ctx context.Context, x *exchange) (*http.Response, context.CancelFunc, error) {
	x.limit = x.timeout
	x.platform = c.audience
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < x.limit {
		x.limit = max(time.Until(dl), 0)
	}
	ctx, cancel := context.WithTimeout(ctx, x.timeout)

	header := http.Header{}
	if x.body != nil {
		header.Set("Content-Type", "application/json")
	}
	if x.accept != "" {
		header.Set("Accept", x.accept)
	}
	if key := idempotencyKeyFrom(ctx); key != "" {
		header.Set(IdempotencyHeader, key)
	}
	if c.tokens != nil {
		claims := x.claims
		if claims.Audience == "" {
			claims.Audience = c.audience
		}
		token, err := c.tokens.AgentToken(ctx, claims)
		if err != nil {
			cancel()
			return nil, nil, x.fail(ErrToken, 0, err, "mint a token: %v", err)
		}
		header.Set("Authorization", "Bearer "+token)
	}

	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, x.method, x.url, bytes.NewReader(x.body))
		if err != nil {
			cancel()
			return nil, nil, x.fail(ErrInvalid, 0, err, "%v", err)
		}
		req.Header = header.Clone()
		resp, err := c.http.Do(req)
		var retry string
		switch {
		case err != nil && ctx.Err() != nil:
			cancel()
			return nil, nil, x.contextError(ctx, err)
		case err != nil && isTimeout(err):
			cancel()
			return nil, nil, x.fail(ErrTimeout, 0, err, "no answer within %s", x.limit.Round(time.Millisecond))
		case err != nil && notSent(err):
			if attempt >= c.maxAttempts {
				cancel()
				return nil, nil, x.fail(ErrUnreachable, 0, err, "cannot connect (tried %d times): %v", attempt, err)
			}
			retry = err.Error()
		case err != nil:
			cancel()
			return nil, nil, x.fail(ErrUnreachable, 0, err, "%v", err)
		case (resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable) && attempt < c.maxAttempts:
			// Drain a little so that the connection can be reused, then try again.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			retry = resp.Status
		default:
			return resp, cancel, nil
		}
		wait := min(c.backoff<<(attempt-1), maxBackoff)
		c.log.DebugContext(ctx, "retrying agent call", "op", x.op, "agent", x.agent, "func", x.fn,
			"attempt", attempt, "reason", retry, "wait", wait)
		if err := sleep(ctx, wait); err != nil {
			cancel()
			return nil, nil, x.contextError(ctx, err)
		}
	}
}

// contextError reports a call that ended because its context did: the deadline (ours or the caller's) or the
// caller giving up.
func (x *exchange) contextError(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return x.fail(ErrTimeout, 0, err, "no answer within %s", x.limit.Round(time.Millisecond))
	}
	return x.fail(ErrCanceled, 0, err, "canceled by the caller")
}

// readBody reads a whole reply, bounded by the Client's size limit and the call's deadline.
func (c *Client) readBody(ctx context.Context, x *exchange, body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, c.maxBody+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, x.contextError(ctx, err)
	case err != nil && isTimeout(err):
		return nil, x.fail(ErrTimeout, 0, err, "the reply stopped arriving: no answer within %s", x.limit.Round(time.Millisecond))
	case err != nil:
		return nil, x.fail(ErrBadResponse, 0, err, "read the reply: %v", err)
	case int64(len(b)) > c.maxBody:
		return nil, x.fail(ErrBadResponse, 0, nil, "the reply is larger than %d bytes", c.maxBody)
	}
	return b, nil
}

// statusError maps an HTTP error status, and the Fixie error object the body may hold, to an *Error.
func (x *exchange) statusError(status int, body []byte) *Error {
	var reply Reply
	_ = json.Unmarshal(body, &reply) // the body of an error need not be JSON
	detail := snippet(body)
	switch {
	case reply.Error != nil && reply.Error.Message != "":
		detail = reply.Error.Message
	case reply.Detail != nil:
		detail = detailString(reply.Detail)
	}
	var e *Error
	switch {
	case status == http.StatusNotFound && x.fn != "":
		msg := fmt.Sprintf("agent at %s has no func %q", x.agent, x.fn)
		if reply.Error != nil {
			if funcs, ok := reply.Error.Details["available_funcs"].([]any); ok {
				msg += fmt.Sprintf(" (its funcs: %s)", joinAny(funcs))
			}
		}
		e = x.newError(ErrFuncNotDefined, status, nil, msg)
	case status == http.StatusNotFound && x.op == "query":
		e = x.fail(ErrStatus, status, nil, "the agent does not take queries (HTTP 404): is it a Code Shot agent? %s", detail)
	case status == http.StatusInternalServerError:
		if reply.Error != nil {
			if last := lastTracebackLine(reply.Error.Details); last != "" {
				detail += " (" + last + ")"
			}
		}
		e = x.fail(ErrAgentFailed, status, nil, "the agent failed: %s%s", detail, x.handshakeAdvice())
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e = x.fail(ErrUnauthorized, status, nil, "the agent refused the platform's token (HTTP %d): %s (the token is for agent %q: "+
			"an agent built with the Fixie SDK takes only tokens whose agent is its FIXIE_ALLOWED_AGENT_ID)", status, detail, x.agentName())
	default:
		e = x.fail(ErrStatus, status, nil, "the agent answered HTTP %d %s: %s", status, http.StatusText(status), detail)
	}
	if reply.Error != nil {
		e.Code, e.AgentMessage = reply.Error.Code, reply.Error.Message
		e.Message += " (" + reply.Error.Code + ")"
	}
	if reply.Message != nil {
		m := *reply.Message
		e.Reply = &m
	}
	return e
}

// agentName is the agent the call's token names ("aid").
func (x *exchange) agentName() string {
	if x.claims.AgentName != "" {
		return x.claims.AgentName
	}
	return x.claims.AgentID
}

// handshakeAdvice explains a failed description: an agent's GET / does little but check the platform's token, and an
// agent built with the Fixie SDK answers a bare HTTP 500 when it cannot (it cannot fetch the keys from the URL it was
// told, or the token is not for its audiences).
func (x *exchange) handshakeAdvice() string {
	if x.op != "fetch metadata" || x.platform == "" {
		return ""
	}
	return fmt.Sprintf(" (an agent built with the Fixie SDK answers so when it cannot check the platform's token: run it "+
		"with FIXIE_API_URL=%s, so that it fetches this platform's keys from %s/.well-known/jwks.json)", x.platform, x.platform)
}

// replyMessage returns the message of a successful reply, or the error it carries.
func (x *exchange) replyMessage(status int, reply Reply) (Message, error) {
	if reply.Error != nil {
		e := x.fail(ErrAgentError, status, nil, "the agent reported an error: %s: %s", reply.Error.Code, reply.Error.Message)
		e.Code, e.AgentMessage = reply.Error.Code, reply.Error.Message
		if reply.Message != nil {
			m := *reply.Message
			e.Reply = &m
		}
		return Message{}, e
	}
	m, err := reply.message()
	if err != nil {
		return Message{}, x.fail(ErrBadResponse, status, err, "%v", err)
	}
	return m, nil
}

// baseURL checks an agent URL and returns it ending in exactly one slash, ready for a func name.
func baseURL(agentURL string) (string, error) {
	u, err := url.Parse(agentURL)
	if err != nil {
		return "", fmt.Errorf("agent URL %q: %w", agentURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("agent URL %q is not an http(s) URL", agentURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("agent URL %q must not have a query or fragment", agentURL)
	}
	return strings.TrimRight(agentURL, "/") + "/", nil
}

// notSent reports whether a request failed while connecting, so the agent never saw it and sending it again is
// safe. A failed DNS lookup is not worth repeating.
func notSent(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns)
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isWord reports whether s is a Fixie func name: one or more letters, digits or underscores.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
	}
	return true
}

// snippet quotes the start of a body for an error message.
func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty body)"
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

func detailString(d any) string {
	if s, ok := d.(string); ok {
		return s
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Sprint(d)
	}
	return string(b)
}

func joinAny(list []any) string {
	parts := make([]string, len(list))
	for i, v := range list {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// lastTracebackLine returns the last line of the Python traceback the Fixie SDK puts in an error's details
// ("ValueError: bad input"): the agent's own account of what failed.
func lastTracebackLine(details map[string]any) string {
	tb, ok := details["traceback"].([]any)
	if !ok || len(tb) == 0 {
		return ""
	}
	s, _ := tb[len(tb)-1].(string)
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
