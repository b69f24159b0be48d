package agentproto

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/codeshot"
)

// protocolJSON is the protocol page's JSON: no type, few_shots as a list.
const protocolJSON = `{
  "base_prompt": "I am a simple agent that generates a random number between two given values.",
  "few_shots": [
    "Q: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\nA: The random number is 17.",
    "Q: Generate a random value from 5 to 10, inclusive.\nAsk Func[genrand]: 5, 10\nFunc[genrand] says: 8\nA: The random number is 8."
  ]
}`

var genrandMetadata = Metadata{
	Type:       TypeCodeShot,
	BasePrompt: "I am a simple agent that generates a random number between two given values.",
	FewShots: []string{
		"Q: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\nA: The random number is 17.",
		"Q: Generate a random value from 5 to 10, inclusive.\nAsk Func[genrand]: 5, 10\nFunc[genrand] says: 8\nA: The random number is 8.",
	},
}

func equalMetadata(a, b Metadata) bool {
	return a.Type == b.Type && a.BasePrompt == b.BasePrompt && a.Conversational == b.Conversational &&
		slices.Equal(a.FewShots, b.FewShots) && slices.Equal(a.SampleQueries, b.SampleQueries)
}

func serveMetadata(t *testing.T, contentType, body string) string {
	t.Helper()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/" {
			http.Error(w, "want GET /", http.StatusMethodNotAllowed)
			return
		}
		// The SDK verifies a token at the handshake too.
		if r.Header.Get("Authorization") != "Bearer token:agt_genrand:alice:ses_1:http://platform.test" {
			http.Error(w, `{"detail":"Invalid token"}`, http.StatusForbidden)
			return
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = io.WriteString(w, body)
	})
	return srv.URL
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		want        Metadata
	}{
		{"Fixie SDK YAML", "application/yaml", sdkYAML(t), genrandMetadata},
		{"protocol page JSON", "application/json", protocolJSON, genrandMetadata},
		{"YAML labelled JSON", "application/json", sdkYAML(t), genrandMetadata},
		{"JSON labelled text", "text/plain; charset=utf-8", protocolJSON, genrandMetadata},
		{"no content type", "", sdkYAML(t), genrandMetadata},
		{"few_shots as one string", "application/json",
			`{"type":"code_shot","base_prompt":"I am a simple agent that generates a random number between two given values.",` +
				`"few_shots":"\nQ: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\nA: The random number is 17.\n\n` +
				`Q: Generate a random value from 5 to 10, inclusive.\nAsk Func[genrand]: 5, 10\nFunc[genrand] says: 8\nA: The random number is 8.\n"}`,
			genrandMetadata},
		{"conversational", "application/yaml", "base_prompt: I chat.\nconversational: true\nfew_shots:\n- \"Q: hi\\nA: hello\\nQ: bye\\nA: bye\"\n",
			Metadata{Type: TypeCodeShot, BasePrompt: "I chat.", Conversational: true, FewShots: []string{"Q: hi\nA: hello\nQ: bye\nA: bye"}}},
		{"standalone SDK YAML", "application/yaml", "sample_queries:\n- Toss a coin\n- Flip a coin twice\ntype: standalone\n",
			Metadata{Type: TypeStandalone, SampleQueries: []string{"Toss a coin", "Flip a coin twice"}}},
		{"standalone without sample queries", "application/yaml", "sample_queries: null\ntype: standalone\n",
			Metadata{Type: TypeStandalone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := serveMetadata(t, tt.contentType, tt.body)
			got, err := newClient().Metadata(context.Background(), u, alice)
			if err != nil {
				t.Fatalf("Metadata: %v", err)
			}
			if !equalMetadata(got, tt.want) {
				t.Errorf("Metadata =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestMetadataOfTheSDKValidates(t *testing.T) {
	t.Parallel()
	md, err := ParseMetadata([]byte(sdkYAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := codeshot.Validate(md.BasePrompt, md.FewShots, codeshot.Options{Funcs: []string{"genrand"}}); err != nil {
		t.Errorf("the SDK's metadata does not validate: %v", err)
	}
}

func TestMetadataErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		says        []string
	}{
		{"HTML page", "text/html", "<html><body>Tunnel website ahead!</body></html>",
			[]string{"not a JSON or YAML object", "content type text/html", "Tunnel website"}},
		{"broken JSON", "application/json", `{"base_prompt": "x", "few_shots": [`,
			[]string{"neither JSON", "nor YAML", "content type application/json"}},
		{"broken YAML", "application/yaml", "base_prompt: [unclosed\nfew_shots: x",
			[]string{"neither JSON nor YAML"}},
		{"empty", "application/json", "  \n", []string{"the metadata is empty"}},
		{"not an agent", "application/json", `{"status":"ok"}`, []string{"no type, few_shots or sample_queries"}},
		{"unknown type", "application/json", `{"type":"wizard"}`, []string{`unknown agent type "wizard"`}},
		{"no few-shots", "application/json", `{"type":"code_shot","base_prompt":"x"}`, []string{"needs few_shots"}},
		{"empty few-shots", "application/yaml", "type: code_shot\nbase_prompt: x\nfew_shots: []\n", []string{"needs few_shots"}},
		{"no base prompt", "application/json", `{"few_shots":["Q: a\nA: b"]}`, []string{"needs base_prompt"}},
		{"few_shots a number", "application/json", `{"base_prompt":"x","few_shots":3}`,
			[]string{"few_shots must be a string or a list of strings, not a number"}},
		{"few_shots with a number", "application/json", `{"base_prompt":"x","few_shots":["Q: a\nA: b", 3]}`,
			[]string{"few_shots[1] must be a string, not a number"}},
		{"base prompt a list", "application/json", `{"base_prompt":["x"],"few_shots":["Q: a\nA: b"]}`,
			[]string{"base_prompt must be a string, not a list"}},
		{"conversational a string", "application/yaml", "base_prompt: x\nfew_shots: ['Q: a\nA: b']\nconversational: 'yes'\n",
			[]string{"conversational must be true or false, not a string"}},
		{"sample queries an object", "application/json", `{"type":"standalone","sample_queries":{"a":1}}`,
			[]string{"sample_queries must be a list of strings, not an object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := serveMetadata(t, tt.contentType, tt.body)
			_, err := newClient().Metadata(context.Background(), u, alice)
			wantError(t, err, ErrBadResponse, u, append([]string{"fetch metadata from agent at " + u}, tt.says...)...)
		})
	}
}

func TestMetadataHTTPErrors(t *testing.T) {
	t.Parallel()
	t.Run("refused token", func(t *testing.T) {
		t.Parallel()
		u := serveMetadata(t, "application/yaml", sdkYAML(t))
		_, err := newClient().Metadata(context.Background(), u, Claims{AgentID: "someone_else"})
		wantError(t, err, ErrUnauthorized, u, "HTTP 403", "Invalid token")
	})
	t.Run("server error", func(t *testing.T) {
		t.Parallel()
		srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		})
		_, err := newClient().Metadata(context.Background(), srv.URL, alice)
		wantError(t, err, ErrAgentFailed, srv.URL, "fetch metadata", "Internal Server Error")
		if calls.Load() != 1 {
			t.Errorf("agent called %d times, want 1", calls.Load())
		}
	})
	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		u := serveMetadata(t, "application/yaml", sdkYAML(t)+strings.Repeat("# padding\n", 200))
		_, err := newClient(WithMaxBodyBytes(1024)).Metadata(context.Background(), u, alice)
		wantError(t, err, ErrBadResponse, u, "larger than 1024 bytes")
	})
	t.Run("hangs", func(t *testing.T) {
		t.Parallel()
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { hang(r) })
		_, err := newClient(WithTimeout(50*time.Millisecond)).Metadata(context.Background(), srv.URL, alice)
		wantError(t, err, ErrTimeout, srv.URL, "fetch metadata", "no answer within 50ms")
	})
}

// sdkYAML is what the Fixie Python SDK (fixieai 1.0.4) answers at GET / for its randint example: PyYAML's dump
// of its metadata, served as application/yaml.
func sdkYAML(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixie-sdk-randint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
