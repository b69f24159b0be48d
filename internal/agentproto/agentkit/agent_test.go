package agentkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
)

func echoAgent() Agent {
	return Agent{
		BasePrompt: "I repeat what I am told.",
		FewShots: []string{
			"Q: Say hello\nAsk Func[echo]: hello\nFunc[echo] says: hello\nA: hello",
			"Q: Break\nAsk Func[fail]: now\nFunc[fail] says: ok\nA: ok",
		},
		Funcs: map[string]Func{
			"echo": func(_ context.Context, c Call) (agentproto.Message, error) {
				who := "anonymous"
				if c.Token != nil && !c.Token.Anonymous() {
					who = c.Token.User
				}
				return agentproto.Message{Text: c.Message.Text + " (for " + who + ")", Embeds: c.Message.Embeds}, nil
			},
			"fail": func(_ context.Context, c Call) (agentproto.Message, error) {
				switch c.Message.Text {
				case "bad input":
					return agentproto.Message{}, BadInput("expected two numbers, got %q", c.Message.Text)
				case "panic":
					panic("index out of range")
				}
				return agentproto.Message{}, errors.New("the stock API is down")
			},
		},
	}
}

func start(t *testing.T, a Agent, opts ...Option) *httptest.Server {
	t.Helper()
	s, err := New(a, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func TestCodeShotAgent(t *testing.T) {
	t.Parallel()
	srv := start(t, echoAgent())
	c := agentproto.NewClient()
	ctx := context.Background()

	md, err := c.Metadata(ctx, srv.URL, agentproto.Claims{})
	if err != nil {
		t.Fatalf("Metadata: %v", err)
	}
	if md.Type != agentproto.TypeCodeShot || md.BasePrompt != "I repeat what I am told." || !slices.Equal(md.FewShots, echoAgent().FewShots) {
		t.Errorf("Metadata = %+v", md)
	}

	embeds := map[string]agentproto.Embed{"img": {ContentType: "image/png", URI: "data:image/png;base64,AA=="}}
	got, err := c.CallFunc(ctx, srv.URL, "echo", agentproto.Message{Text: "hi #img", Embeds: embeds}, agentproto.Claims{})
	if err != nil || got.Text != "hi #img (for anonymous)" || got.Embeds["img"] != embeds["img"] {
		t.Errorf("CallFunc(echo) = %+v, %v", got, err)
	}

	tests := []struct {
		fn, text string
		kind     error
		says     []string
	}{
		{"nope", "x", agentproto.ErrFuncNotDefined, []string{`has no func "nope" (its funcs: echo, fail)`, agentproto.CodeFuncNotDefined}},
		{"fail", "bad input", agentproto.ErrStatus, []string{"HTTP 400", `expected two numbers, got "bad input"`, CodeBadInput}},
		{"fail", "boom", agentproto.ErrAgentFailed, []string{"the agent failed: the stock API is down", agentproto.CodeAgentUnhandledException}},
		{"fail", "panic", agentproto.ErrAgentFailed, []string{"func fail panicked: index out of range"}},
	}
	for _, tt := range tests {
		_, err := c.CallFunc(ctx, srv.URL, tt.fn, agentproto.Message{Text: tt.text}, agentproto.Claims{})
		if !errors.Is(err, tt.kind) {
			t.Errorf("CallFunc(%s, %q) = %v, want kind %v", tt.fn, tt.text, err, tt.kind)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("CallFunc(%s, %q) error %q does not say %q", tt.fn, tt.text, err, s)
			}
		}
	}
}

func TestAgentAcceptsTheSimplestRequestShape(t *testing.T) {
	t.Parallel()
	srv := start(t, echoAgent())
	resp, err := http.Post(srv.URL+"/echo", "application/json", strings.NewReader(`{"text":"plain","embeds":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text":"plain (for anonymous)"`) {
		t.Errorf("POST /echo = %d %s", resp.StatusCode, body)
	}
}

func TestAgentRefusesWhatIsNotTheProtocol(t *testing.T) {
	t.Parallel()
	srv := start(t, echoAgent())
	tests := []struct {
		method, path, body string
		status             int
		says               string
	}{
		{http.MethodPost, "/", `{"text":"hi"}`, 405, "not part of the agent protocol"},
		{http.MethodGet, "/echo", "", 405, "not part of the agent protocol"},
		{http.MethodPost, "/a/b", `{}`, 405, "not part of the agent protocol"},
		{http.MethodPost, "/echo", `not json`, 400, "not a JSON message"},
		{http.MethodPost, "/echo", `{"hello":1}`, 400, `no \"message\"`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
			t.Errorf("%s %s = %d %s, want %d saying %q", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.says)
		}
	}
}

func TestNewChecksTheAgent(t *testing.T) {
	t.Parallel()
	unregistered := echoAgent()
	unregistered.FewShots = append(unregistered.FewShots, "Q: Price?\nAsk Func[quote]: GOOG\nFunc[quote] says: 1\nA: 1")
	noPrompt := echoAgent()
	noPrompt.BasePrompt = ""
	both := echoAgent()
	both.Respond = func(context.Context, Call, func(agentproto.Message) error) error { return nil }
	tests := []struct {
		name  string
		agent Agent
		says  string
	}{
		{"unregistered func", unregistered, "few-shots: few-shot 3, line 2: Func[quote] is not a func of this agent (its funcs: "},
		{"no base prompt", noPrompt, "needs a base prompt"},
		{"no few-shots", Agent{BasePrompt: "x"}, "needs few-shots"},
		{"both kinds", both, "either standalone"},
	}
	for _, tt := range tests {
		if _, err := New(tt.agent); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: New = %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
}

func TestStandaloneAgent(t *testing.T) {
	t.Parallel()
	srv := start(t, Agent{
		SampleQueries: []string{"Tell me a story"},
		Respond: func(_ context.Context, c Call, send func(agentproto.Message) error) error {
			text := ""
			for _, word := range []string{"Once", "upon", "a", "time"} {
				text = strings.TrimSpace(text + " " + word)
				if err := send(agentproto.Message{Text: text}); err != nil {
					return err
				}
			}
			if c.Message.Text == "and then?" {
				return errors.New("the story ran out")
			}
			return send(agentproto.Message{Text: text + fmt.Sprintf(" (session %s).", c.Session)})
		},
	})
	c := agentproto.NewClient()
	md, err := c.Metadata(context.Background(), srv.URL, agentproto.Claims{})
	if err != nil || md.Type != agentproto.TypeStandalone || !slices.Equal(md.SampleQueries, []string{"Tell me a story"}) {
		t.Errorf("Metadata = %+v, %v", md, err)
	}

	var partials []string
	got, err := c.Query(context.Background(), srv.URL, agentproto.Message{Text: "Tell me a story"}, agentproto.Claims{SessionID: "ses_7"},
		func(s string) { partials = append(partials, s) })
	if err != nil || got.Text != "Once upon a time (session ses_7)." {
		t.Fatalf("Query = %+v, %v", got, err)
	}
	if want := []string{"Once", "Once upon", "Once upon a", "Once upon a time", "Once upon a time (session ses_7)."}; !slices.Equal(partials, want) {
		t.Errorf("partials = %q, want %q", partials, want)
	}

	_, err = c.Query(context.Background(), srv.URL, agentproto.Message{Text: "and then?"}, agentproto.Claims{}, nil)
	if !errors.Is(err, agentproto.ErrAgentError) || !strings.Contains(err.Error(), "the story ran out") {
		t.Errorf("Query that fails mid-stream = %v, want ErrAgentError saying why", err)
	}
}
