package openaiapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// mcpServer is a Go MCP server of the SDK on loopback: add (with a schema), fail, and slow (never offered here).
// It records the methods it was asked and the Authorization it got.
type mcpServer struct {
	*httptest.Server
	mu      sync.Mutex
	methods []string
	auth    []string
}

func (m *mcpServer) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, x := range m.methods {
		if x == method {
			n++
		}
	}
	return n
}

func serveMCP(t *testing.T) *mcpServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the sum is " + itoa(in.A+in.B)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the disk is full")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Slow"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	m := &mcpServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		m.mu.Lock()
		m.methods = append(m.methods, msg.Method)
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

func itoa(n int) string { raw, _ := json.Marshal(n); return string(raw) }

func mcpTool(url string, approval string, allowed ...string) responses.ToolUnionParam {
	t := &responses.ToolMcpParam{ServerLabel: "calc", ServerURL: openai.String(url),
		Headers: map[string]string{"Authorization": "Bearer sk-mcp-secret-42"}}
	if approval != "" {
		t.RequireApproval = responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: openai.String(approval)}
	}
	if allowed != nil {
		t.AllowedTools = responses.ToolMcpAllowedToolsUnionParam{OfMcpAllowedTools: allowed}
	}
	return responses.ToolUnionParam{OfMcp: t}
}

func call(name, args string) llmtest.Reply {
	return llmtest.ToolCalls(llm.ToolCall{ID: "call_" + name, Name: name, Arguments: args})
}

// The mcp tool through /v1/responses with openai-go: tools listed once and kept in the context, only the allowed
// ones offered, a call and a failing call as mcp_call items, approval asked and answered both ways, a refused host,
// a server that is down, the stream's event names, and the headers never in the log in clear.
func TestResponsesMCP(t *testing.T) {
	srv := serveMCP(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/mcp"
	down.Close()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) {
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://"), strings.TrimPrefix(downURL[:strings.LastIndex(downURL, "/")], "http://")}
	}))
	ctx := ctxFor(t)

	// A host not in --mcp-hosts is a 400 naming the field, and no request is made.
	_, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi"),
		Tools: []responses.ToolUnionParam{mcpTool("http://127.0.0.1:1/mcp", "never")}})
	var apiError *openai.Error
	if !errors.As(err, &apiError) || apiError.StatusCode != 400 || !strings.Contains(apiError.Param+apiError.Message, "tools[0].server_url") {
		t.Fatalf("a refused host: %v", apiErr(err))
	}

	// Listed once, allowed tools offered, called without approval.
	e.model.Enqueue(call("add", `{"a":2,"b":3}`), llmtest.Text("It is 5."))
	first, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("add 2 and 3"),
		Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "never", "add", "fail")}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	types := itemTypes(first.Output)
	if strings.Join(types, ",") != "mcp_list_tools,mcp_call,message" || first.OutputText() != "It is 5." {
		t.Fatalf("output: %v: %s", types, first.RawJSON())
	}
	list, callItem := first.Output[0].AsMcpListTools(), first.Output[1].AsMcpCall()
	if len(list.Tools) != 3 || list.ServerLabel != "calc" || !strings.Contains(rawJSON(list.Tools[0].InputSchema), "properties") {
		t.Errorf("mcp_list_tools: %s", first.Output[0].RawJSON())
	}
	if callItem.Name != "add" || callItem.Output != "the sum is 5" || callItem.Arguments != `{"a":2,"b":3}` {
		t.Errorf("mcp_call: %s", first.Output[1].RawJSON())
	}
	reqs := e.model.Requests()
	if body := string(reqs[0].Body); !strings.Contains(body, `"add"`) || !strings.Contains(body, `"fail"`) || strings.Contains(body, `"slow"`) {
		t.Errorf("the model was offered: %s", body)
	}
	if got := roles(reqs[1]); !strings.Contains(strings.Join(got, "|"), "call:add|tool:the sum is 5") {
		t.Errorf("the model's second turn: %q", got)
	}

	// A follow-up does not list again; a failing tool is an mcp_call with its error, and the model goes on.
	e.model.Enqueue(call("fail", `{}`), llmtest.Text("It failed."))
	second, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("now fail"),
		PreviousResponseID: openai.String(first.ID), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "never", "add", "fail")}})
	if err != nil {
		t.Fatalf("follow-up: %v", apiErr(err))
	}
	if got := srv.count("tools/list"); got != 1 {
		t.Errorf("tools/list was called %d times, want once", got)
	}
	if types := itemTypes(second.Output); strings.Join(types, ",") != "mcp_call,message" ||
		!strings.Contains(second.Output[0].RawJSON(), "the disk is full") {
		t.Errorf("follow-up output %v: %s", types, second.RawJSON())
	}

	// Approval asked (the default), then given.
	e.model.Enqueue(call("add", `{"a":1,"b":1}`))
	asked, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("add 1 and 1"),
		PreviousResponseID: openai.String(second.ID), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "")}})
	if err != nil || strings.Join(itemTypes(asked.Output), ",") != "mcp_approval_request" || asked.Status != "completed" {
		t.Fatalf("approval request: %v: %s", apiErr(err), raw(asked))
	}
	calls := srv.count("tools/call")
	request := asked.Output[0].AsMcpApprovalRequest()
	e.model.Enqueue(llmtest.Text("It is 2."))
	approved, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMcpApprovalResponse(request.ID, true)}},
		PreviousResponseID: openai.String(asked.ID), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "")}})
	if err != nil {
		t.Fatalf("approve: %v", apiErr(err))
	}
	if types := itemTypes(approved.Output); strings.Join(types, ",") != "mcp_call,message" ||
		approved.Output[0].AsMcpCall().ApprovalRequestID != request.ID || approved.Output[0].AsMcpCall().Output != "the sum is 2" {
		t.Errorf("approved: %v: %s", types, approved.RawJSON())
	}
	if srv.count("tools/call") != calls+1 {
		t.Errorf("an approved call was made %d times", srv.count("tools/call")-calls)
	}

	// Asked again, and refused: no call; the model reads the refusal.
	e.model.Enqueue(call("add", `{"a":4,"b":4}`))
	asked, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("add 4 and 4"),
		PreviousResponseID: openai.String(approved.ID), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "always")}})
	if err != nil || len(asked.Output) != 1 {
		t.Fatalf("approval request: %v: %s", apiErr(err), raw(asked))
	}
	calls = srv.count("tools/call")
	e.model.Enqueue(llmtest.Text("Not done."))
	refused, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMcpApprovalResponse(asked.Output[0].ID, false)}},
		PreviousResponseID: openai.String(asked.ID), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "always")}})
	if err != nil || strings.Join(itemTypes(refused.Output), ",") != "message" || srv.count("tools/call") != calls {
		t.Errorf("refused: %v: %s", apiErr(err), raw(refused))
	}
	last := e.model.Requests()[len(e.model.Requests())-1]
	if got := strings.Join(roles(last), "|"); !strings.Contains(got, "did not approve") {
		t.Errorf("the model did not read the refusal: %s", got)
	}

	// A server that is down fails the response with a message, never a 5xx.
	failed, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi"),
		Tools: []responses.ToolUnionParam{mcpTool(downURL, "never")}})
	if err != nil || failed.Status != "failed" || !strings.Contains(failed.Error.Message, "calc") ||
		failed.Output[0].AsMcpListTools().Error == "" {
		t.Errorf("a server that is down: %v: %s", apiErr(err), raw(failed))
	}

	// The stream's events, as openai-node names them.
	e.model.Enqueue(call("add", `{"a":7,"b":8}`), llmtest.Text("15."))
	stream := e.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("7+8"),
		Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "never")}})
	var seen []string
	for stream.Next() {
		seen = append(seen, stream.Current().Type)
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	for _, want := range []string{"response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
		"response.mcp_call.in_progress", "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
		"response.mcp_call.completed", "response.completed"} {
		if !strings.Contains(strings.Join(seen, ","), want) {
			t.Errorf("the stream lacks %s: %v", want, seen)
		}
	}

	// The token went to the server, and is in neither the logs nor the log of events.
	srv.mu.Lock()
	sent := strings.Join(srv.auth, ",")
	srv.mu.Unlock()
	if !strings.Contains(sent, "Bearer sk-mcp-secret-42") {
		t.Errorf("the server did not get the headers: %q", sent)
	}
	if strings.Contains(e.node.Logs.String(), "sk-mcp-secret") {
		t.Errorf("the token is in the node's logs")
	}
	hist, _, err := e.node.Store.Load(ctx, events.Ref{Type: "response", ID: first.ID})
	if err != nil || len(hist) == 0 {
		t.Fatalf("load the response's events: %v", err)
	}
	for _, ev := range hist {
		if raw, _ := json.Marshal(ev.Event); bytes.Contains(raw, []byte("sk-mcp-secret")) {
			t.Errorf("the token is in clear in %s", ev.Event.EventType())
		}
	}
}

func itemTypes(items []responses.ResponseOutputItemUnion) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Type
	}
	return out
}

func rawJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// openai-node 7.x's responses.stream() over a response that lists and calls an MCP server: the SDK accumulates the
// stream and knows every event's name.
func TestResponsesMCPNpmStream(t *testing.T) {
	npmtest.Install(t, npmDir, filepath.Join("openai7", "package.json"), "OpenAI's npm SDK")
	srv := serveMCP(t)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")} }))
	e.model.Enqueue(call("add", `{"a":20,"b":22}`), llmtest.Text("42."))
	var out struct {
		Events []string
		Output []struct{ Type, Name, Output string }
		Text   string
	}
	npmtest.RunJSON(t, npmDir, "mcp.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key, "MCP_URL=" + srv.URL}, &out)
	events := strings.Join(out.Events, ",")
	for _, want := range []string{"response.mcp_list_tools.completed", "response.mcp_call_arguments.delta",
		"response.mcp_call_arguments.done", "response.mcp_call.completed", "response.completed"} {
		if !strings.Contains(events, want) {
			t.Errorf("the SDK saw no %s: %s", want, events)
		}
	}
	if len(out.Output) != 3 || out.Output[1].Type != "mcp_call" || out.Output[1].Output != "the sum is 42" || out.Text != "42." {
		t.Errorf("final response: %+v", out)
	}
}

// TestResponsesMCPCrash kills the node after an MCP call's result was recorded, while the model's next turn is under
// way, and starts another on the same data: the response completes there without calling the tool again, and its
// log holds the one mcp_call.
func TestResponsesMCPCrash(t *testing.T) {
	srv := serveMCP(t)
	model := llmtest.NewServer(t)
	var restarted atomic.Bool
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		switch {
		case last.Role != llm.RoleTool:
			return call("add", `{"a":40,"b":2}`)
		case !restarted.Load():
			return llmtest.Text("The answer is coming").HangAfter(1)
		}
		return llmtest.Text("Done: " + last.Content)
	})
	dir := t.TempDir()
	cfg := platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test"
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	})
	n := platformtest.Start(t, platformtest.WithDataDir(dir), cfg)
	_, key := n.NewAccount(t, "survivor")
	ctx := ctxFor(t)
	client := sdk(n, key)
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("40+2"),
		Background: openai.Bool(true), Tools: []responses.ToolUnionParam{mcpTool(srv.URL, "never")}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	waittest.Until(t, "the call recorded and the next turn in its model call", func() bool { return len(model.Requests()) >= 2 }) // the call is recorded; the next turn hangs
	if got := srv.count("tools/call"); got != 1 {
		t.Fatalf("tools/call before the crash: %d", got)
	}
	n.Crash()
	restarted.Store(true)
	n2 := platformtest.Start(t, platformtest.WithDataDir(dir), cfg)
	done := waitResponse(t, sdk(n2, key), r.ID)
	if done.Status != "completed" || strings.Join(itemTypes(done.Output), ",") != "mcp_list_tools,mcp_call,message" ||
		done.OutputText() != "Done: the sum is 42" {
		t.Fatalf("after the restart: %s", done.RawJSON())
	}
	if got := srv.count("tools/call"); got != 1 {
		t.Errorf("the tool was called %d times", got)
	}
	hist, _, err := n2.Store.Load(ctx, events.Ref{Type: "response", ID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, e := range hist {
		if d, ok := e.Event.(events.ResponseItemAdded); ok && d.Item.Type == "mcp_call" {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("the log holds %d mcp_call items", calls)
	}
}

// TestResponsesMCPInterruptedCall kills the node while an MCP tool (one with effects: it charges) is being called,
// before its result is recorded, and starts another node on the same data: the call's start was recorded before it
// was made, so the response goes on there with the call recorded as failed, interrupted by the restart, and the
// tool is not called a second time. The model reads that it was interrupted. Then the same for a call the user
// approved, which runs before the model is asked.
func TestResponsesMCPInterruptedCall(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1"}, nil)
	var charges atomic.Int32
	// The first call after hold is set is held until the node has been killed (the test closes the channel it
	// passes on inCall then); any other call, such as one made again after a restart, answers at once.
	var hold atomic.Bool
	inCall := make(chan chan struct{}, 1)
	mcp.AddTool(s, &mcp.Tool{Name: "charge", Description: "Charges the card"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		charges.Add(1)
		if hold.Swap(false) {
			release := make(chan struct{})
			inCall <- release
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)

	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if last := req.LastMessage(); last.Role == llm.RoleTool {
			return llmtest.Text("Told: " + last.Content)
		}
		return call("charge", `{}`)
	})
	dir := t.TempDir()
	cfg := platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test"
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	})
	n := platformtest.Start(t, platformtest.WithDataDir(dir), cfg)
	_, key := n.NewAccount(t, "payer")
	ctx := ctxFor(t)
	bank := func(approval string) []responses.ToolUnionParam {
		return []responses.ToolUnionParam{{OfMcp: &responses.ToolMcpParam{ServerLabel: "bank", ServerURL: openai.String(srv.URL),
			RequireApproval: responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: openai.String(approval)}}}}
	}
	// crash kills the node once the tool is being called, and starts another on the same data.
	crash := func() {
		t.Helper()
		var release chan struct{}
		select {
		case release = <-inCall:
		case <-ctx.Done():
			t.Fatal("the tool was not called")
		}
		n.Crash()
		close(release)
		n = platformtest.Start(t, platformtest.WithDataDir(dir), cfg)
	}
	interrupted := func(r *responses.Response, types string, i int) {
		t.Helper()
		if r.Status != "completed" || strings.Join(itemTypes(r.Output), ",") != types {
			t.Fatalf("after the restart: %s", r.RawJSON())
		}
		c := r.Output[i].AsMcpCall()
		if c.Name != "charge" || c.Status != "failed" || !strings.Contains(r.Output[i].RawJSON(), `"error":"The call was interrupted by a restart`) || c.Output != "" {
			t.Errorf("the interrupted call: %s", r.Output[i].RawJSON())
		}
		if !strings.Contains(r.OutputText(), "Told: Error: The call was interrupted by a restart") {
			t.Errorf("the model read: %q", r.OutputText())
		}
	}

	client := sdk(n, key)
	hold.Store(true)
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("pay"),
		Background: openai.Bool(true), Tools: bank("never")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	crash()
	interrupted(waitResponse(t, sdk(n, key), r.ID), "mcp_list_tools,mcp_call,message", 1)
	if got := charges.Load(); got != 1 {
		t.Fatalf("the tool was called %d times", got)
	}

	// A call the user approves runs before the model is asked; killed while it runs, it is not made again either.
	client = sdk(n, key)
	asked, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("pay again"),
		PreviousResponseID: openai.String(r.ID), Tools: bank("always")})
	if err != nil || strings.Join(itemTypes(asked.Output), ",") != "mcp_approval_request" {
		t.Fatalf("approval request: %v: %s", apiErr(err), raw(asked))
	}
	hold.Store(true)
	approved, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMcpApprovalResponse(asked.Output[0].ID, true)}},
		PreviousResponseID: openai.String(asked.ID), Background: openai.Bool(true), Tools: bank("always")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	crash()
	done := waitResponse(t, sdk(n, key), approved.ID)
	interrupted(done, "mcp_call,message", 0)
	if id := done.Output[0].AsMcpCall().ApprovalRequestID; id != asked.Output[0].ID {
		t.Errorf("the interrupted call answers %q", id)
	}
	if got := charges.Load(); got != 2 {
		t.Fatalf("the tool was called %d times in all, want 2", got)
	}
}
