package openaiapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// env is a running node whose openai provider is a scripted OpenAI-compatible server, and the official SDK
// pointed at the node's /v1 with a fresh account's key.
type env struct {
	node   *platformtest.Node
	model  *llmtest.Server
	client openai.Client
	key    string
}

func newEnv(t *testing.T, opts ...platformtest.Option) *env {
	t.Helper()
	model := llmtest.NewServer(t)
	opts = append([]platformtest.Option{platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test-upstream"
	})}, opts...)
	n := platformtest.Start(t, opts...)
	_, key := n.NewAccount(t, "tester")
	// A failure that comes only under load is explained by what the node warned of meanwhile (a lease lost, a
	// feed stopped), which the test's own message cannot say.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, l := range strings.Split(n.Logs.String(), "\n") {
			if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
				t.Logf("node: %s", l)
			}
		}
	})
	return &env{node: n, model: model, client: sdk(n, key), key: key}
}

// sdk is the official client against a node, with retries off so that an error shows as it is.
func sdk(n *platformtest.Node, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(n.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// weatherTool is a function tool the scripted model calls.
func weatherTool() openai.AssistantToolUnionParam {
	return openai.AssistantToolParamOfFunction(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("The weather in a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
	})
}

func (e *env) assistant(t *testing.T, tools ...openai.AssistantToolUnionParam) *openai.Assistant {
	t.Helper()
	a, err := e.client.Beta.Assistants.New(ctxFor(t), openai.BetaAssistantNewParams{
		Model: "gpt-4o-mini", Name: openai.String("helper"), Instructions: openai.String("You help."), Tools: tools,
	})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	return a
}

func (e *env) thread(t *testing.T, text string) *openai.Thread {
	t.Helper()
	th, err := e.client.Beta.Threads.New(ctxFor(t), openai.BetaThreadNewParams{
		Messages: []openai.BetaThreadNewParamsMessage{{Role: "user",
			Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String(text)}}},
	})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	return th
}

// run creates a run of the assistant on the thread.
func (e *env) run(t *testing.T, threadID, assistantID string) *openai.Run {
	t.Helper()
	run, err := e.client.Beta.Threads.Runs.New(ctxFor(t), threadID, openai.BetaThreadRunNewParams{AssistantID: assistantID})
	if err != nil {
		t.Fatalf("create run: %v", apiErr(err))
	}
	return run
}

// waitRun polls a run, as the SDKs' poll helpers do, until it leaves queued, in_progress and cancelling.
func (e *env) waitRun(t *testing.T, threadID, runID string) *openai.Run {
	t.Helper()
	ctx := ctxFor(t)
	for {
		run, err := e.client.Beta.Threads.Runs.Get(ctx, threadID, runID)
		if err != nil {
			t.Fatalf("poll run %s: %v", runID, apiErr(err))
		}
		switch run.Status {
		case openai.RunStatusQueued, openai.RunStatusInProgress, openai.RunStatusCancelling:
		default:
			return run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s still %s", runID, run.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// completeRun runs the assistant on the thread and fails the test unless the run completes.
func (e *env) completeRun(t *testing.T, threadID, assistantID string) *openai.Run {
	t.Helper()
	run, err := e.client.Beta.Threads.Runs.New(ctxFor(t), threadID, openai.BetaThreadRunNewParams{AssistantID: assistantID})
	if err != nil {
		t.Fatalf("create run: %v", apiErr(err))
	}
	if run = e.waitRun(t, threadID, run.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("run: %s", run.RawJSON())
	}
	return run
}

// apiErr shows an SDK error with the body the server sent.
func apiErr(err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Error() + ": " + ae.RawJSON())
	}
	return err
}

// wantAPIError checks that err is the OpenAI error object with the status (and the param, when given).
func wantAPIError(t *testing.T, err error, status int, param string) *openai.Error {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error %d, got %v", status, err)
	}
	if ae.StatusCode != status {
		t.Fatalf("want status %d, got %d: %s", status, ae.StatusCode, ae.RawJSON())
	}
	if ae.Message == "" || ae.Type == "" {
		t.Fatalf("error object lacks message or type: %s", ae.RawJSON())
	}
	if param != "" && ae.Param != param {
		t.Fatalf("want param %q, got %q: %s", param, ae.Param, ae.RawJSON())
	}
	return ae
}

// rawError is the body of an error answer read without the SDK.
type rawError struct {
	Error struct {
		Message *string         `json:"message"`
		Type    *string         `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// checkErrorBody checks an HTTP answer is a 4xx with OpenAI's error object: all four fields present.
func checkErrorBody(t *testing.T, status int, body []byte) rawError {
	t.Helper()
	if status < 400 || status >= 500 {
		t.Fatalf("want a 4xx, got %d: %s", status, body)
	}
	var e rawError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if e.Error.Message == nil || *e.Error.Message == "" || e.Error.Type == nil || e.Error.Param == nil || e.Error.Code == nil {
		t.Fatalf("error body is not OpenAI's error object: %s", body)
	}
	return e
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
