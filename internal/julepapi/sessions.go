package julepapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm/tokens"
	"github.com/contrailhq/contrail/projections"
)

// sessionBody is a session as clients send it.
type sessionBody struct {
	Agent            present[string] `json:"agent"`
	Agents           []string        `json:"agents"`
	User             present[string] `json:"user"`
	Users            []string        `json:"users"`
	Situation        present[string] `json:"situation"`
	SystemTemplate   present[string] `json:"system_template"`
	RenderTemplates  present[bool]   `json:"render_templates"`
	TokenBudget      present[int]    `json:"token_budget"`
	ContextOverflow  present[string] `json:"context_overflow"`
	AutoRunTools     present[bool]   `json:"auto_run_tools"`
	ForwardToolCalls present[bool]   `json:"forward_tool_calls"`
	RecallOptions    json.RawMessage `json:"recall_options"`
	Metadata         json.RawMessage `json:"metadata"`
}

// spec is the session a create or a PUT makes (Julep's defaults for what is not sent).
func (b sessionBody) spec() (events.JulepSessionSpec, error) {
	s := events.JulepSessionSpec{Agents: b.Agents, Users: b.Users, Situation: b.Situation.ptr(),
		SystemTemplate: b.SystemTemplate.ptr(), RenderTemplates: true, TokenBudget: b.TokenBudget.ptr(),
		ContextOverflow: b.ContextOverflow.Value, AutoRunTools: b.AutoRunTools.Value,
		ForwardToolCalls: b.ForwardToolCalls.Value, Metadata: notNull(b.Metadata)}
	if v := b.RenderTemplates.ptr(); v != nil {
		s.RenderTemplates = *v
	}
	if v := b.Agent.ptr(); v != nil {
		s.Agents = append([]string{*v}, s.Agents...)
	}
	if v := b.User.ptr(); v != nil {
		s.Users = append([]string{*v}, s.Users...)
	}
	for i := range s.Agents {
		s.Agents[i] = canonical(s.Agents[i])
	}
	for i := range s.Users {
		s.Users[i] = canonical(s.Users[i])
	}
	r, err := recallOptions(b.RecallOptions)
	s.RecallOptions = r
	return s, err
}

// recallOptions reads recall options with Julep's defaults for their mode (vector when none is said).
func recallOptions(raw json.RawMessage) (*events.JulepRecallOptions, error) {
	if len(notNull(raw)) == 0 {
		return nil, nil
	}
	var mode struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(raw, &mode); err != nil {
		return nil, errs.InvalidField("recall_options", "recall_options must be an object")
	}
	if mode.Mode == "" {
		mode.Mode = "vector"
	}
	r := commands.DefaultRecallOptions(mode.Mode)
	if err := decode(raw, &r); err != nil {
		if e := errs.As(err); e != nil && e.Field != "" {
			e.Field = "recall_options." + e.Field
		}
		return nil, err
	}
	return &r, nil
}

// patch is what a PATCH changes.
func (b sessionBody) patch() session.SessionPatch {
	p := session.SessionPatch{Situation: b.Situation.ptr(), SystemTemplate: b.SystemTemplate.ptr(),
		RenderTemplates: b.RenderTemplates.ptr(), AutoRunTools: b.AutoRunTools.ptr(), ForwardTool: b.ForwardToolCalls.ptr(),
		Metadata: notNull(b.Metadata), RecallOptions: b.RecallOptions}
	if b.ContextOverflow.Set {
		v := b.ContextOverflow.Value
		p.ContextOverflow = &v
	}
	if b.TokenBudget.Set {
		v := b.TokenBudget.ptr()
		p.TokenBudget = &v
	}
	return p
}

// sessionJSON is Julep's Session (and the agents and users it has, which Julep's answer leaves out).
type sessionJSON struct {
	ID               string                     `json:"id"`
	Kind             string                     `json:"kind"`
	Situation        *string                    `json:"situation"`
	Summary          *string                    `json:"summary"`
	SystemTemplate   *string                    `json:"system_template"`
	RenderTemplates  bool                       `json:"render_templates"`
	TokenBudget      *int                       `json:"token_budget"`
	ContextOverflow  *string                    `json:"context_overflow"`
	AutoRunTools     bool                       `json:"auto_run_tools"`
	ForwardToolCalls bool                       `json:"forward_tool_calls"`
	RecallOptions    *events.JulepRecallOptions `json:"recall_options"`
	Metadata         json.RawMessage            `json:"metadata"`
	Agents           []string                   `json:"agents"`
	Users            []string                   `json:"users"`
	CreatedAt        string                     `json:"created_at"`
	UpdatedAt        string                     `json:"updated_at"`
}

func sessionOut(v session.JulepView) sessionJSON {
	s := v.Spec
	out := sessionJSON{ID: v.ID, Kind: kindOf(s), Situation: s.Situation, SystemTemplate: s.SystemTemplate,
		RenderTemplates: s.RenderTemplates, TokenBudget: s.TokenBudget, AutoRunTools: s.AutoRunTools,
		ForwardToolCalls: s.ForwardToolCalls, RecallOptions: s.RecallOptions, Metadata: orObject(s.Metadata),
		Agents: s.Agents, Users: s.Users, CreatedAt: jsonTime(v.Created), UpdatedAt: jsonTime(v.Updated)}
	if out.Users == nil {
		out.Users = []string{}
	}
	if v.Summary != "" {
		out.Summary = &v.Summary
	}
	if s.ContextOverflow != "" {
		out.ContextOverflow = &s.ContextOverflow
	}
	return out
}

// kindOf is Julep's name for a session's make-up.
func kindOf(s events.JulepSessionSpec) string {
	agents := "single_agent"
	if len(s.Agents) > 1 {
		agents = "multi_agent"
	}
	switch len(s.Users) {
	case 0:
		return agents + "_no_user"
	case 1:
		return agents + "_single_user"
	}
	return agents + "_multi_user"
}

func (f *Face) createSession(w http.ResponseWriter, r *http.Request) {
	createWith(f, w, r, sessionOut, func(ctx context.Context, p auth.Principal, id string, b sessionBody) (commands.Written[session.JulepView], error) {
		spec, err := b.spec()
		if err != nil {
			return commands.Written[session.JulepView]{}, b.named(err)
		}
		res, err := f.d.Sessions.Create(ctx, p, id, spec)
		return res, b.named(err)
	})
}

// named gives an error about the session's agents or users the field the client sent: the spec puts agent and user
// first in the lists, so "agents[0]" is "agent" when agent was given, and agents[i] the client's agents[i-1].
func (b sessionBody) named(err error) error {
	e := errs.As(err)
	if e == nil {
		return err
	}
	for _, one := range []struct {
		single, list string
		given        bool
	}{{"agent", "agents", b.Agent.ptr() != nil}, {"user", "users", b.User.ptr() != nil}} {
		var i int
		if !one.given || !strings.HasPrefix(e.Field, one.list+"[") {
			continue
		}
		if _, scan := fmt.Sscanf(e.Field, one.list+"[%d]", &i); scan != nil {
			continue
		}
		out := *e
		out.Field = one.single
		if i > 0 {
			out.Field = fmt.Sprintf("%s[%d]", one.list, i-1)
		}
		out.Message = strings.ReplaceAll(out.Message, e.Field, out.Field)
		return &out
	}
	return err
}

func (f *Face) createOrUpdateSession(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "session_id", sessionOut, func(ctx context.Context, p auth.Principal, id string, b sessionBody) (commands.Written[session.JulepView], error) {
		spec, err := b.spec()
		if err != nil {
			return commands.Written[session.JulepView]{}, err
		}
		res, err := f.d.Sessions.CreateOrUpdate(ctx, p, id, spec)
		return res, b.named(err)
	})
}

func (f *Face) replaceSession(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "session_id", sessionOut, func(ctx context.Context, p auth.Principal, id string, b sessionBody) (commands.Written[session.JulepView], error) {
		spec, err := b.spec()
		if err != nil {
			return commands.Written[session.JulepView]{}, err
		}
		res, err := f.d.Sessions.Replace(ctx, p, id, spec)
		return res, b.named(err)
	})
}

func (f *Face) patchSession(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "session_id", sessionOut, func(ctx context.Context, p auth.Principal, id string, b sessionBody) (commands.Written[session.JulepView], error) {
		if raw := notNull(b.RecallOptions); raw != nil && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return commands.Written[session.JulepView]{}, errs.InvalidField("recall_options", "recall_options must be an object")
		}
		return f.d.Sessions.Patch(ctx, p, id, b.patch())
	})
}

func (f *Face) getSession(w http.ResponseWriter, r *http.Request) {
	getWith(f, w, r, "session_id", sessionOut, f.d.Sessions.Get)
}

func (f *Face) deleteSession(w http.ResponseWriter, r *http.Request) {
	deleteWith(f, w, r, "session_id", func(v session.JulepView) time.Time { return v.Updated }, f.d.Sessions.Delete)
}

func (f *Face) listSessions(w http.ResponseWriter, r *http.Request) {
	listFrom(f, w, r, projections.JulepSessionsModel, principal(r).AccountID+".*", withMetadata, func(v session.JulepView) (listItem, any) {
		return listItem{created: v.Created, updated: v.Updated, metadata: v.Spec.Metadata}, sessionOut(v)
	})
}

// entryJSON is Julep's history Entry.
type entryJSON struct {
	ID         string         `json:"id"`
	Role       string         `json:"role"`
	Name       *string        `json:"name"`
	Content    string         `json:"content"`
	Source     string         `json:"source"`
	ToolCalls  []toolCallJSON `json:"tool_calls"`
	ToolCallID *string        `json:"tool_call_id"`
	Model      string         `json:"model"`
	Tokenizer  string         `json:"tokenizer"`
	TokenCount int            `json:"token_count"`
	CreatedAt  string         `json:"created_at"`
	Timestamp  string         `json:"timestamp"`
}

// toolCallJSON is a tool call as Julep (and OpenAI) write it.
type toolCallJSON struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func toolCallsOut(calls []events.JulepToolCall) []toolCallJSON {
	if len(calls) == 0 {
		return nil
	}
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i] = toolCallJSON{ID: c.ID, Type: "function", Function: functionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}

// history answers the session's history: the saved turns' messages.
func (f *Face) history(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "session_id")
	var out map[string]any
	err := f.d.Sessions.Read(r.Context(), principal(r), id, eventstore.Fresh, func(s *session.State) error {
		entries := make([]entryJSON, len(s.Julep.Entries))
		for i, e := range s.Julep.Entries {
			entries[i] = entryJSON{ID: e.ID, Role: e.Role, Content: e.Content, Source: e.Source,
				ToolCalls: toolCallsOut(e.ToolCalls), Model: e.Model, Tokenizer: tokens.Encoding(e.Model),
				TokenCount: tokens.Count(e.Model, e.Content), CreatedAt: jsonTime(e.Time), Timestamp: jsonTime(e.Time)}
			if e.Name != "" {
				entries[i].Name = &e.Name
			}
			if e.ToolCallID != "" {
				entries[i].ToolCallID = &e.ToolCallID
			}
		}
		out = map[string]any{"session_id": id, "created_at": jsonTime(s.Created), "entries": entries, "relations": []any{}}
		return nil
	})
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, out)
}
