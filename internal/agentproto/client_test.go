package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tokenFunc is the simplest TokenSource: the platform's real one signs Ed25519 JWTs.
type tokenFunc func(ctx context.Context, c Claims) (string, error)

func (f tokenFunc) AgentToken(ctx context.Context, c Claims) (string, error) { return f(ctx, c) }

// plainTokens mints "token:<agent>:<user>:<session>:<audience>", so that a test server can check what it was given.
var plainTokens = tokenFunc(func(_ context.Context, c Claims) (string, error) {
	return strings.Join([]string{"token", c.AgentID, c.User, c.SessionID, c.Audience}, ":"), nil
})

var alice = Claims{User: "alice", AgentID: "agt_genrand", SessionID: "ses_1"}

func newClient(opts ...Option) *Client {
	base := []Option{WithTokenSource(plainTokens), WithAudience("http://platform.test"), WithRetryBackoff(time.Millisecond)}
	return NewClient(append(base, opts...)...)
}

// serve starts a test agent and counts the requests it gets.
func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// hang blocks until the client goes away. It reads the request body first: the server notices a closed connection
// only once the body has been consumed.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// wantError checks an error's kind and that its message names the agent and says what is expected.
func wantError(t *testing.T, err error, kind error, agentURL string, says ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *agentproto.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("err = %v, kind %v, want kind %v", err, e.Kind, kind)
	}
	if agentURL != "" && !strings.Contains(err.Error(), agentURL) {
		t.Errorf("error %q does not name the agent %s", err, agentURL)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	return e
}

func TestCallFunc(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/genrand" {
			writeJSON(w, 400, `{"detail":"want POST /genrand, got `+r.Method+" "+r.URL.Path+`"}`)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer token:agt_genrand:alice:ses_1:http://platform.test" {
			writeJSON(w, 403, `{"detail":"bad token `+got+`"}`)
			return
		}
		var body map[string]map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, 400, `{"detail":"bad body"}`)
			return
		}
		// The argument arrives as {"message": {"text": ..., "embeds": {...}}}, embeds present even when empty.
		if body["message"]["text"] != "0, 19" || body["message"]["embeds"] == nil {
			writeJSON(w, 400, `{"detail":"bad message"}`)
			return
		}
		writeJSON(w, 200, `{"message":{"text":"17 #pic","embeds":{"pic":{"content_type":"image/png","uri":"data:image/png;base64,AA=="}}},"error":null}`)
	})
	got, err := newClient().CallFunc(context.Background(), srv.URL, "genrand", Message{Text: "0, 19"}, alice)
	if err != nil {
		t.Fatalf("CallFunc: %v", err)
	}
	want := Message{Text: "17 #pic", Embeds: map[string]Embed{"pic": {ContentType: "image/png", URI: "data:image/png;base64,AA=="}}}
	if got.Text != want.Text || got.Embeds["pic"] != want.Embeds["pic"] || len(got.Embeds) != 1 {
		t.Errorf("CallFunc = %+v, want %+v", got, want)
	}
}

func TestCallFuncAgentURLWithPath(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"message":{"text":"`+r.URL.Path+`"}}`)
	})
	for _, u := range []string{srv.URL + "/agents/calc", srv.URL + "/agents/calc/"} {
		got, err := NewClient().CallFunc(context.Background(), u, "calc", Message{Text: "1+1"}, Claims{})
		if err != nil || got.Text != "/agents/calc/calc" {
			t.Errorf("CallFunc(%s) = %+v, %v; want the func under the agent's path", u, got, err)
		}
	}
}

func TestCallFuncNotDefined(t *testing.T) {
	t.Parallel()
	t.Run("Fixie SDK", func(t *testing.T) {
		t.Parallel()
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 404, `{"message":{"text":"I'm sorry, Func[nope] is not defined.","embeds":{}},`+
				`"error":{"code":"ERR_FUNC_NOT_DEFINED","message":"The function was not defined.",`+
				`"details":{"traceback":[],"func_name":"nope","available_funcs":["genrand"]}}}`)
		})
		_, err := newClient().CallFunc(context.Background(), srv.URL, "nope", Message{Text: "x"}, alice)
		e := wantError(t, err, ErrFuncNotDefined, srv.URL, `has no func "nope"`, "its funcs: genrand", CodeFuncNotDefined)
		if e.Status != 404 || e.Code != CodeFuncNotDefined || e.Reply == nil || e.Reply.Text != "I'm sorry, Func[nope] is not defined." {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("plain 404", func(t *testing.T) {
		t.Parallel()
		srv, _ := serve(t, http.NotFound)
		_, err := newClient().CallFunc(context.Background(), srv.URL, "nope", Message{}, alice)
		wantError(t, err, ErrFuncNotDefined, srv.URL, `agent at `+srv.URL+` has no func "nope"`)
	})
}

func TestCallFuncAgentFailedIsNotRetried(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, `{"message":{"text":"I'm sorry, an error occurred while processing your request.","embeds":{}},`+
			`"error":{"code":"ERR_AGENT_UNHANDLED_EXCEPTION","message":"An unhandled exception occurred while processing the request.",`+
			`"details":{"traceback":["Traceback (most recent call last):\n","  File \"main.py\", line 3, in calc\n","ZeroDivisionError: division by zero\n"]}}}`)
	})
	_, err := newClient().CallFunc(context.Background(), srv.URL, "calc", Message{Text: "1/0"}, alice)
	e := wantError(t, err, ErrAgentFailed, srv.URL, `call func "calc"`, "the agent failed",
		"An unhandled exception occurred", "ZeroDivisionError: division by zero", CodeAgentUnhandledException)
	if e.Code != CodeAgentUnhandledException || e.Status != 500 {
		t.Errorf("error = %+v", e)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the agent was called %d times; a 500 must not be retried (the func may have run)", n)
	}
}

func TestCallFuncRetries503ThenSucceeds(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := calls.Add(1)
		if !strings.Contains(string(body), `"text":"5, 50"`) {
			writeJSON(w, 400, `{"detail":"attempt lost its body"}`)
			return
		}
		if n < 3 {
			if n == 1 {
				http.Error(w, "tunnel not ready", http.StatusServiceUnavailable)
			} else {
				http.Error(w, "bad gateway", http.StatusBadGateway)
			}
			return
		}
		writeJSON(w, 200, `{"message":{"text":"23"}}`)
	}))
	t.Cleanup(srv.Close)
	got, err := newClient().CallFunc(context.Background(), srv.URL, "genrand", Message{Text: "5, 50"}, alice)
	if err != nil || got.Text != "23" {
		t.Fatalf("CallFunc = %+v, %v; want 23 after two retries", got, err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("agent called %d times, want 3", n)
	}
}

func TestCallFuncGivesUpOn503(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
	})
	_, err := newClient(WithMaxAttempts(4)).CallFunc(context.Background(), srv.URL, "genrand", Message{}, alice)
	e := wantError(t, err, ErrStatus, srv.URL, "HTTP 503", "no healthy upstream")
	if e.Status != 503 {
		t.Errorf("Status = %d, want 503", e.Status)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("agent called %d times, want the 4 attempts allowed", n)
	}
}

func TestCallFuncTimeoutIsNotRetried(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		hang(r) // an agent that never answers
	})
	_, err := newClient(WithTimeout(50*time.Millisecond)).CallFunc(context.Background(), srv.URL, "slow", Message{}, alice)
	e := wantError(t, err, ErrTimeout, srv.URL, `call func "slow"`, "no answer within 50ms")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cause = %v, want context.DeadlineExceeded", e.Err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent called %d times; a timeout must not be retried (the func may have run)", n)
	}
}

func TestCallFuncBodyThatNeverEnds(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":{"text":"`)
		w.(http.Flusher).Flush()
		hang(r)
	})
	_, err := newClient(WithTimeout(50*time.Millisecond)).CallFunc(context.Background(), srv.URL, "slow", Message{}, alice)
	wantError(t, err, ErrTimeout, srv.URL, "no answer within")
}

func TestCallFuncCallerDeadlineIsReported(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { hang(r) })
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
	defer cancel()
	_, err := newClient().CallFunc(ctx, srv.URL, "slow", Message{}, alice)
	e := wantError(t, err, ErrTimeout, srv.URL)
	if strings.Contains(e.Message, "30s") {
		t.Errorf("error %q reports the client's timeout, not the caller's shorter deadline", e.Message)
	}
}

func TestCallFuncCanceled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		hang(r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := newClient().CallFunc(ctx, srv.URL, "slow", Message{}, alice)
	wantError(t, err, ErrCanceled, srv.URL, "canceled")
}

// closedPort returns the address of a port that refuses connections.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestCallFuncUnreachable(t *testing.T) {
	t.Parallel()
	agentURL := "http://" + closedPort(t)
	_, err := newClient().CallFunc(context.Background(), agentURL, "genrand", Message{}, alice)
	wantError(t, err, ErrUnreachable, agentURL, "cannot connect (tried 3 times)", "connection refused")
}

func TestCallFuncRetriesRefusedConnection(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"message":{"text":"42"}}`)
	})
	// The first connection goes to a closed port and is refused for real, as when an agent is restarting.
	refused := closedPort(t)
	var dials atomic.Int32
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			addr = refused
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	c := newClient(WithHTTPClient(&http.Client{Transport: transport}))
	got, err := c.CallFunc(context.Background(), srv.URL, "genrand", Message{Text: "0, 100"}, alice)
	if err != nil || got.Text != "42" {
		t.Fatalf("CallFunc = %+v, %v; want 42 after one refused connection", got, err)
	}
	if d, n := dials.Load(), calls.Load(); d != 2 || n != 1 {
		t.Errorf("dials = %d, requests = %d; want 2 dials and 1 request", d, n)
	}
}

func TestCallFuncAgentErrorObject(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"message":{"text":"I could not parse that."},"error":{"code":"ERR_BAD_INPUT","message":"expected two numbers"}}`)
	})
	_, err := newClient().CallFunc(context.Background(), srv.URL, "genrand", Message{Text: "x"}, alice)
	e := wantError(t, err, ErrAgentError, srv.URL, "ERR_BAD_INPUT", "expected two numbers")
	if e.Code != "ERR_BAD_INPUT" || e.AgentMessage != "expected two numbers" || e.Reply == nil {
		t.Errorf("error = %+v", e)
	}
}

func TestCallFuncBadResponses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		says string
	}{
		{"not JSON", "<html>Tunnel not found</html>", "not JSON"},
		{"no message", `{"result": 17}`, `neither "message" nor "text"`},
		{"embed without uri", `{"message":{"text":"#a","embeds":{"a":{"content_type":"image/png"}}}}`, `embed "a" needs both content_type and uri`},
		{"too large", `{"message":{"text":"` + strings.Repeat("x", 2000) + `"}}`, "larger than 1024 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, tt.body) })
			_, err := newClient(WithMaxBodyBytes(1024)).CallFunc(context.Background(), srv.URL, "f", Message{}, alice)
			wantError(t, err, ErrBadResponse, srv.URL, tt.says)
		})
	}
}

func TestCallFuncOtherStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		body   string
		kind   error
		says   []string
	}{
		{401, `{"detail":"Not authenticated"}`, ErrUnauthorized, []string{"refused the platform's token", "HTTP 401", "Not authenticated"}},
		{403, `{"detail":"Invalid token"}`, ErrUnauthorized, []string{"HTTP 403", "Invalid token", `agent "agt_genrand"`, "FIXIE_ALLOWED_AGENT_ID"}},
		{422, `{"detail":[{"loc":["body","message"],"msg":"field required"}]}`, ErrStatus, []string{"HTTP 422", "field required"}},
		{418, "short and stout", ErrStatus, []string{"HTTP 418 I'm a teapot", "short and stout"}},
		{504, "", ErrStatus, []string{"HTTP 504", "(empty body)"}},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, tt.status, tt.body) })
			_, err := newClient().CallFunc(context.Background(), srv.URL, "f", Message{}, alice)
			e := wantError(t, err, tt.kind, srv.URL, tt.says...)
			if e.Status != tt.status || calls.Load() != 1 {
				t.Errorf("status = %d, calls = %d; want %d, 1", e.Status, calls.Load(), tt.status)
			}
		})
	}
}

func TestCallFuncInvalid(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"text":"x"}`) })
	tests := []struct{ url, fn, says string }{
		{srv.URL, "../admin", `func name "../admin" is not a word`},
		{srv.URL, "", `func name "" is not a word`},
		{"ftp://example.test/agent", "f", "is not an http(s) URL"},
		{"http://", "f", "is not an http(s) URL"},
		{srv.URL + "/?x=1", "f", "must not have a query"},
	}
	for _, tt := range tests {
		_, err := newClient().CallFunc(context.Background(), tt.url, tt.fn, Message{}, alice)
		wantError(t, err, ErrInvalid, "", tt.says)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("an invalid call reached the agent %d times", n)
	}
}

func TestCallFuncTokenFailure(t *testing.T) {
	t.Parallel()
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"text":"x"}`) })
	broken := tokenFunc(func(context.Context, Claims) (string, error) { return "", errors.New("signing key not loaded") })
	_, err := NewClient(WithTokenSource(broken)).CallFunc(context.Background(), srv.URL, "f", Message{}, alice)
	wantError(t, err, ErrToken, srv.URL, "mint a token", "signing key not loaded")
	if n := calls.Load(); n != 0 {
		t.Errorf("a call without a token reached the agent %d times", n)
	}
}

func TestNoTokenSourceSendsNoAuthorization(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"message":{"text":"`+r.Header.Get("Authorization")+`"}}`)
	})
	got, err := NewClient().CallFunc(context.Background(), srv.URL, "f", Message{}, alice)
	if err != nil || got.Text != "" {
		t.Errorf("CallFunc = %+v, %v; want no Authorization header", got, err)
	}
}

func TestQuerySimplestAgent(t *testing.T) {
	t.Parallel()
	// The agent of Fixie's overview: reads request.json["text"] and request.json["embeds"], answers {"text": ...}.
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		text, ok1 := req["text"].(string)
		_, ok2 := req["embeds"].(map[string]any)
		if !ok1 || !ok2 || r.Method != http.MethodPost || r.URL.Path != "/" {
			writeJSON(w, 500, `{"detail":"KeyError"}`)
			return
		}
		writeJSON(w, 200, `{"text":"Hello, world! You said: `+text+`"}`)
	})
	var partials []string
	got, err := newClient().Query(context.Background(), srv.URL, Message{Text: "hi"}, alice, func(s string) { partials = append(partials, s) })
	if err != nil || got.Text != "Hello, world! You said: hi" {
		t.Fatalf("Query = %+v, %v", got, err)
	}
	if !slices.Equal(partials, []string{"Hello, world! You said: hi"}) {
		t.Errorf("partials = %q", partials)
	}
}

func TestQueryStreamsJSONLines(t *testing.T) {
	t.Parallel()
	seen := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var req QueryRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Message.Text != "tell me a story" || req.Session != "ses_1" || !req.Stream {
			writeJSON(w, 400, `{"detail":"bad request"}`)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices if the client goes away
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":{"text":"Once"},"type":"response"}`+"\n")
		w.(http.Flusher).Flush()
		// The rest is sent only once the client has shown the first line: proof that it streams.
		select {
		case <-seen:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"message":{"text":"Once upon"},"type":"response"}`+"\n")
		_, _ = io.WriteString(w, `{"message":{"text":"Once upon a time. #cover","embeds":{"cover":{"content_type":"image/png","uri":"data:image/png;base64,AA=="}}},"type":"response"}`+"\n")
	})
	var partials []string
	got, err := newClient(WithQueryTimeout(5*time.Second)).Query(context.Background(), srv.URL, Message{Text: "tell me a story"}, alice,
		func(s string) {
			if len(partials) == 0 {
				close(seen)
			}
			partials = append(partials, s)
		})
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if got.Text != "Once upon a time. #cover" || got.Embeds["cover"].ContentType != "image/png" {
		t.Errorf("Query = %+v", got)
	}
	if want := []string{"Once", "Once upon", "Once upon a time. #cover"}; !slices.Equal(partials, want) {
		t.Errorf("partials = %q, want %q", partials, want)
	}
}

func TestQueryFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		kind    error
		says    []string
		partial int // partial texts delivered before the failure
	}{
		{"message shape", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, `{"message":{"text":"fine"}}`)
		}, nil, nil, 1},
		{"error line", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, `{"message":{"text":"Thinking"}}`+"\n"+`{"message":{"text":"Sorry"},"error":{"code":"ERR_UPSTREAM","message":"the weather API is down"}}`)
		}, ErrAgentError, []string{"ERR_UPSTREAM", "the weather API is down"}, 1},
		{"broken line", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, `{"message":{"text":"Once"}}`+"\n"+`{"message":{"te`+"\n")
		}, ErrBadResponse, []string{"unreadable reply after 1 complete lines"}, 1},
		{"empty", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, "") }, ErrBadResponse, []string{"the reply is empty"}, 0},
		{"stalls mid-stream", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, `{"message":{"text":"Once"}}`+"\n")
			w.(http.Flusher).Flush()
			hang(r)
		}, ErrTimeout, []string{"no answer within 100ms"}, 1},
		{"code shot agent", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 405, `{"detail":"Method Not Allowed"}`)
		}, ErrStatus, []string{"HTTP 405", "Method Not Allowed"}, 0},
		{"no query endpoint", http.NotFound, ErrStatus, []string{"does not take queries"}, 0},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, `{"message":{"text":"`+strings.Repeat("x", 4096)+`"}}`)
		}, ErrBadResponse, []string{"larger than 1024 bytes"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, tt.handler)
			partials := 0
			c := newClient(WithQueryTimeout(100*time.Millisecond), WithMaxBodyBytes(1024))
			_, err := c.Query(context.Background(), srv.URL, Message{Text: "q"}, alice, func(string) { partials++ })
			if tt.kind == nil {
				if err != nil {
					t.Fatalf("Query: %v", err)
				}
			} else {
				wantError(t, err, tt.kind, srv.URL, tt.says...)
			}
			if partials != tt.partial {
				t.Errorf("%d partial texts delivered, want %d", partials, tt.partial)
			}
		})
	}
}

// TestRefusalsSayWhatTheTokenNamed: an agent's own words for a refusal come through, with the agent the token
// named; a description that fails with a bare 500 (the Fixie SDK's answer when it cannot check the token) says how
// to point the agent at this platform's keys.
func TestRefusalsSayWhatTheTokenNamed(t *testing.T) {
	t.Parallel()
	refuse, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 403, `{"detail":"Invalid token"}`) })
	claims := Claims{User: "alice", AgentID: "agt_1", AgentName: "alice/dice"}
	_, err := newClient().Metadata(context.Background(), refuse.URL, claims)
	wantError(t, err, ErrUnauthorized, refuse.URL, "Invalid token", `agent "alice/dice"`, "FIXIE_ALLOWED_AGENT_ID")
	_, err = newClient().CallFunc(context.Background(), refuse.URL, "roll", Message{}, claims)
	wantError(t, err, ErrUnauthorized, refuse.URL, "Invalid token", `agent "alice/dice"`)

	broken, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(500)
		_, _ = w.Write([]byte("Internal Server Error"))
	})
	_, err = newClient().Metadata(context.Background(), broken.URL, claims)
	wantError(t, err, ErrAgentFailed, broken.URL, "Internal Server Error", "FIXIE_API_URL=http://platform.test",
		"http://platform.test/.well-known/jwks.json")
	_, err = newClient().CallFunc(context.Background(), broken.URL, "roll", Message{}, claims)
	if e := wantError(t, err, ErrAgentFailed, broken.URL, "Internal Server Error"); strings.Contains(e.Message, "FIXIE_API_URL") {
		t.Errorf("a func that failed is not a handshake: %s", e.Message)
	}
}
