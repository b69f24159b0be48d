package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/workflow"
	"github.com/contrailhq/contrail/projections"
)

// maxToolName bounds a tool's name: clients prefix it with the server's name, and several cut the whole at 64.
const maxToolName = 48

// toolName makes a tool's name of a prefix and a name of the user's: the characters MCP allows ([A-Za-z0-9_.-]),
// others turned into '_', cut to maxToolName.
func toolName(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > maxToolName {
		s = s[:maxToolName]
	}
	return s
}

// containsWord reports whether msg names field.
func containsWord(msg, field string) bool { return strings.Contains(msg, field) }

// askInput is what an agent's tool takes.
type askInput struct {
	Query   string `json:"query" jsonschema:"the question or request for the agent"`
	Session string `json:"session,omitempty" jsonschema:"a session a previous answer named, to go on with the same conversation; a new one when left out"`
}

// askOutput is an agent's answer.
type askOutput struct {
	Session   string                 `json:"session"`
	MessageID string                 `json:"message_id,omitempty"`
	Text      string                 `json:"text"`
	Embeds    map[string]embedOutput `json:"embeds,omitempty"`
	Status    string                 `json:"status"`
}

type embedOutput struct {
	URI         string `json:"uri"`
	ContentType string `json:"content_type"`
}

// queryableAgents are the agents an account's key may ask: the built-in ones and the account's own, by handle.
// Another account's agents are not offered, published or not: a tool of this server acts for the account.
func (f *Face) queryableAgents(ctx context.Context, p auth.Principal) ([]agent.Info, error) {
	var out []agent.Info
	if f.d.Builtins != nil {
		out = append(out, f.d.Builtins()...)
	}
	own, err := projections.ListAll[projections.AgentView](ctx, f.d.Views, "agents", projections.OwnAgentsFilter(p.AccountID))
	if err != nil {
		return nil, fmt.Errorf("list the agents of %s: %w", p.AccountID, err)
	}
	slices.SortFunc(own, func(a, b projections.AgentView) int { return cmp.Compare(a.Handle, b.Handle) })
	for _, v := range own {
		if v.Account == p.AccountID {
			out = append(out, v.Info)
		}
	}
	return out, nil
}

func (f *Face) addAgentTools(ctx context.Context, s *mcp.Server, p auth.Principal) error {
	list, err := f.queryableAgents(ctx, p)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range list {
		name := toolName("ask_", a.Handle)
		if seen[name] {
			continue // a built-in's handle is reserved; a clash of cut names keeps the first
		}
		seen[name] = true
		desc := cmp.Or(a.Description, a.Name, "Contrail agent "+a.Handle)
		desc = fmt.Sprintf("Ask the agent %s: %s. The answer's session continues the conversation.", a.Handle, desc)
		mcp.AddTool(s, &mcp.Tool{Name: name, Title: cmp.Or(a.Name, a.Handle), Description: desc},
			func(ctx context.Context, _ *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, askOutput, error) {
				out, res := f.ask(ctx, p, a, in)
				return res, out, nil
			})
	}
	return nil
}

// ask posts the query to a session answered by the agent (a new one, or the one given) and waits for its answer.
func (f *Face) ask(ctx context.Context, p auth.Principal, a agent.Info, in askInput) (askOutput, *mcp.CallToolResult) {
	tool := "ask_" + a.Handle
	if strings.TrimSpace(in.Query) == "" {
		return askOutput{}, f.toolError(tool, errs.InvalidField("query", "query must not be empty"))
	}
	sessionID := strings.TrimSpace(in.Session)
	if sessionID != "" {
		if err := ids.Check("session", ids.Session, sessionID); err != nil {
			return askOutput{}, f.toolError(tool, err)
		}
	} else {
		created, err := f.d.Sessions.Create(ctx, p, commands.NewSession{FrontendAgent: a.ID, Name: "MCP: " + a.Handle})
		if err != nil {
			return askOutput{}, f.toolError(tool, err)
		}
		sessionID = created.ID
	}
	// The watch starts before the post, so that an answer appended at once is not missed.
	w, err := f.d.Store.Watch(ctx, events.Ref{Type: session.Aggregate, ID: sessionID})
	if err != nil {
		return askOutput{}, f.toolError(tool, err)
	}
	defer w.Close()
	posted, err := f.d.Sessions.Post(ctx, p, commands.NewSessionMessage{Session: sessionID, Text: in.Query})
	if errs.CodeOf(err) == errs.NotFound {
		err = errs.InvalidField("session", "no session %q of yours", sessionID)
	}
	if err != nil {
		return askOutput{}, f.toolError(tool, err)
	}
	out := askOutput{Session: sessionID, Status: "waiting"}
	wctx, cancel := context.WithTimeout(ctx, f.d.ReplyWait)
	defer cancel()
	for e, err := range w.FollowFrom(wctx, posted.Seq) {
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				out.Text = fmt.Sprintf("no answer within %s; the session %s will have it", f.d.ReplyWait, sessionID)
				return out, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Text}}}
			}
			return out, f.toolError(tool, err)
		}
		m, ok := session.ChatMessage(e)
		if !ok || m.InReplyTo != posted.Message.ID || m.Type == events.MessageQuery {
			continue
		}
		out.MessageID, out.Text = m.ID, m.Text
		if m.Type == events.MessageError {
			out.Status = "failed"
			r := &mcp.CallToolResult{}
			r.SetError(errors.New(m.Text))
			return out, r
		}
		out.Status = "answered"
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: m.Text}}}
		keys := make([]string, 0, len(m.Embeds))
		for k := range m.Embeds {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			e := m.Embeds[k]
			uri := e.URI
			if e.EmbedID != "" && f.d.Embeds != nil {
				if uri, err = f.d.Embeds.EmbedURL(ctx, e.EmbedID); err != nil {
					return out, f.toolError(tool, err)
				}
			}
			if out.Embeds == nil {
				out.Embeds = map[string]embedOutput{}
			}
			out.Embeds[k] = embedOutput{URI: uri, ContentType: e.ContentType}
			res.Content = append(res.Content, &mcp.ResourceLink{URI: uri, Name: k, MIMEType: e.ContentType})
		}
		return out, res
	}
	return out, f.toolError(tool, ctx.Err())
}

// taskSource is what a tool needs of a task's source.
type taskSource struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// taskOutput is what a task's tool answers: the execution's output once it succeeded, or where it is.
type taskOutput struct {
	ExecutionID string          `json:"execution_id"`
	Status      string          `json:"status"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
}

func (f *Face) addTaskTools(ctx context.Context, s *mcp.Server, p auth.Principal) error {
	tasks, err := projections.ListAll[julep.Task](ctx, f.d.Views, projections.JulepTasksModel, p.AccountID+".*")
	if err != nil {
		return fmt.Errorf("list the tasks of %s: %w", p.AccountID, err)
	}
	slices.SortFunc(tasks, func(a, b julep.Task) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	seen := map[string]bool{}
	for _, t := range tasks {
		if t.Account != p.AccountID {
			continue
		}
		var src taskSource
		_ = json.Unmarshal(t.Spec.Source, &src)
		name := toolName("task_", cmp.Or(src.Name, t.ID))
		if seen[name] {
			name = toolName("task_", cmp.Or(src.Name, "task")+"_"+t.ID[:8])
		}
		seen[name] = true
		desc := cmp.Or(src.Description, "Run the Julep task "+cmp.Or(src.Name, t.ID))
		desc += fmt.Sprintf(" (task %s). Returns the execution's output, or its ID and status when it waits for input or runs long.", t.ID)
		s.AddTool(&mcp.Tool{Name: name, Title: src.Name, Description: desc, InputSchema: objectSchema(src.InputSchema),
			OutputSchema: taskOutputSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return f.runTask(ctx, p, name, t.ID, req.Params.Arguments), nil
			})
	}
	return nil
}

// taskOutputSchema describes taskOutput.
var taskOutputSchema = json.RawMessage(`{"type":"object","properties":{"execution_id":{"type":"string"},` +
	`"status":{"type":"string"},"output":{},"error":{"type":"string"}},"required":["execution_id","status"]}`)

// objectSchema is a task's input_schema as a tool's: MCP wants an object schema, and a task without one takes
// any object.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if t, ok := m["type"]; !ok || t != "object" {
		m["type"] = "object"
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return out
}

// runTask starts an execution with the arguments as its input (the command checks them against input_schema) and
// waits until it ends or asks for input, or for TaskWait.
func (f *Face) runTask(ctx context.Context, p auth.Principal, tool, taskID string, args json.RawMessage) *mcp.CallToolResult {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return f.toolError(tool, errs.InvalidField("arguments", "the arguments must be a JSON object"))
	}
	request := events.NewPrefixedID("mcp_")
	execID := events.DeriveUUID(request, "execution")
	ref := events.Ref{Type: execution.Aggregate, ID: events.JulepAggregateID(p.AccountID, execID)}
	w, err := f.d.Store.Watch(ctx, ref)
	if err != nil {
		return f.toolError(tool, err)
	}
	defer w.Close()
	written, err := f.d.Executions.Create(ctx, p, request, taskID, args, nil)
	if err != nil {
		return f.toolError(tool, err)
	}
	x := written.Object
	wctx, cancel := context.WithTimeout(ctx, f.d.TaskWait)
	defer cancel()
	for e, err := range w.FollowFrom(wctx, 0) {
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				break // past the wait: answer where it is
			}
			return f.toolError(tool, err)
		}
		x.FoldView(e)
		if waits(x.Status) {
			break
		}
	}
	return taskResult(x)
}

// waits reports whether an execution will not move without the caller: it ended, or waits for input.
func waits(s workflow.Status) bool {
	switch s {
	case workflow.StatusSucceeded, workflow.StatusFailed, workflow.StatusCancelled, workflow.StatusAwaitingInput:
		return true
	}
	return false
}

func taskResult(x execution.Execution) *mcp.CallToolResult {
	out := taskOutput{ExecutionID: x.ID, Status: string(x.Status), Error: x.Error}
	if x.Status == workflow.StatusSucceeded {
		out.Output = x.Output
	}
	raw, _ := json.Marshal(out)
	res := &mcp.CallToolResult{StructuredContent: json.RawMessage(raw), IsError: x.Status == workflow.StatusFailed || x.Status == workflow.StatusCancelled}
	switch x.Status {
	case workflow.StatusSucceeded:
		text := string(x.Output)
		if text == "" {
			text = "null"
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	case workflow.StatusFailed, workflow.StatusCancelled:
		res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("execution %s %s: %s", x.ID, x.Status, x.Error)}}
	default:
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(raw)}}
	}
	return res
}

// searchInput is what a store's search takes.
type searchInput struct {
	Query         string `json:"query" jsonschema:"what to look for"`
	MaxNumResults int    `json:"max_num_results,omitempty" jsonschema:"how many results at most, 1 to 50 (default 10)"`
}

type searchOutput struct {
	Results []searchHit `json:"results"`
}

type searchHit struct {
	FileID   string  `json:"file_id"`
	Filename string  `json:"filename"`
	Score    float64 `json:"score"`
	Text     string  `json:"text"`
}

func (f *Face) addStoreTools(ctx context.Context, s *mcp.Server, p auth.Principal) error {
	docs, err := projections.ListAll[projections.Listed[string]](ctx, f.d.Views, projections.VectorStoresModel, p.AccountID+".*")
	if err != nil {
		return fmt.Errorf("list the vector stores of %s: %w", p.AccountID, err)
	}
	slices.SortFunc(docs, func(a, b projections.Listed[string]) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, d := range docs {
		id := d.Obj
		st, err := f.d.VectorStores.Get(ctx, p, id)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since the read model was read
		}
		if err != nil {
			return err
		}
		name := toolName("search_", id)
		desc := fmt.Sprintf("Search the vector store %s", id)
		if st.Name != "" {
			desc = fmt.Sprintf("Search the vector store %q (%s)", st.Name, id)
		}
		mcp.AddTool(s, &mcp.Tool{Name: name, Title: cmp.Or(st.Name, id), Description: desc + ": the best matching chunks of its files, with their file IDs and scores."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, searchOutput, error) {
				return f.search(ctx, p, name, id, in)
			})
	}
	return nil
}

func (f *Face) search(ctx context.Context, p auth.Principal, tool, id string, in searchInput) (*mcp.CallToolResult, searchOutput, error) {
	out := searchOutput{Results: []searchHit{}}
	if strings.TrimSpace(in.Query) == "" {
		return f.toolError(tool, errs.InvalidField("query", "query must not be empty")), out, nil
	}
	if in.MaxNumResults < 0 || in.MaxNumResults > 50 {
		return f.toolError(tool, errs.InvalidField("max_num_results", "max_num_results must be between 1 and 50, got %d", in.MaxNumResults)), out, nil
	}
	hits, err := f.d.VectorStores.Search(ctx, p, id, commands.SearchRequest{Queries: []string{strings.TrimSpace(in.Query)}, Limit: in.MaxNumResults})
	if err != nil {
		return f.toolError(tool, err), out, nil
	}
	res := &mcp.CallToolResult{}
	for _, h := range hits {
		out.Results = append(out.Results, searchHit{FileID: h.FileID, Filename: h.Filename, Score: h.Score, Text: h.Text})
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("[%s %s score %.3f]\n%s", h.FileID, h.Filename, h.Score, h.Text)})
	}
	if len(hits) == 0 {
		res.Content = []mcp.Content{&mcp.TextContent{Text: "no results"}}
	}
	return res, out, nil
}
