package julepchat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/jinja"
	"github.com/contrailhq/contrail/internal/julepdocs"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Lookup reads the agents and users of an account.
type Lookup interface {
	JulepAgent(ctx context.Context, account, id string) (julep.Agent, error)
	JulepUser(ctx context.Context, account, id string) (julep.User, error)
}

// Docs searches docs and embeds text.
type Docs interface {
	Search(ctx context.Context, q julepdocs.Query) ([]julepdocs.Ref, error)
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Preparer prepares chats.
type Preparer struct {
	lookup Lookup
	docs   Docs
	// defaultModel is the model of agents that name none.
	defaultModel string
	counter      *tokens.Counter
}

// NewPreparer returns a preparer.
func NewPreparer(lookup Lookup, docs Docs, defaultModel string) *Preparer {
	return &Preparer{lookup: lookup, docs: docs, defaultModel: defaultModel, counter: tokens.NewCounter(1 << 14)}
}

// Snapshot is what a chat is prepared from: the session as it stood when the turn's step began.
type Snapshot struct {
	SessionID string
	Account   string
	Spec      events.JulepSessionSpec
	// Entries is the session's history so far; Summary the latest summary of it (zero when none).
	Entries []session.Entry
	Summary events.SessionSummarized
	Request events.SessionChatRequested
}

// Scope is what a chat runs with: its agents and users, settings and tools.
type Scope struct {
	Agent    julep.Agent
	Agents   []julep.Agent
	Users    []julep.User
	Settings events.JulepChatSettings
	// Model is the model string the chat runs on.
	Model   string
	Offered []Offered
	// Metadata is the scope's metadata merged by Julep's precedence: the chat's over the session's over the
	// users' over the agent's.
	Metadata map[string]any
}

// Scope loads the scope of a chat.
func (p *Preparer) Scope(ctx context.Context, snap Snapshot) (Scope, error) {
	var sc Scope
	for _, id := range snap.Spec.Agents {
		a, err := p.lookup.JulepAgent(ctx, snap.Account, id)
		if err != nil {
			if errs.CodeOf(err) == errs.NotFound {
				return sc, errs.E(errs.Invalid, "agent %s of session %s was deleted; make a new session", id, snap.SessionID)
			}
			return sc, err
		}
		sc.Agents = append(sc.Agents, a)
		if id == snap.Request.Agent {
			sc.Agent = a
		}
	}
	for _, id := range snap.Spec.Users {
		u, err := p.lookup.JulepUser(ctx, snap.Account, id)
		if err != nil {
			if errs.CodeOf(err) == errs.NotFound {
				return sc, errs.E(errs.Invalid, "user %s of session %s was deleted; make a new session", id, snap.SessionID)
			}
			return sc, err
		}
		sc.Users = append(sc.Users, u)
	}
	if sc.Agent.ID == "" {
		return sc, errs.InvalidField("agent", "agent %s is not an agent of session %s", snap.Request.Agent, snap.SessionID)
	}
	sc.Settings = mergeSettings(sc.Agent.Spec.DefaultSettings, snap.Request.Settings)
	sc.Model = sc.Settings.Model
	if sc.Model == "" {
		sc.Model = sc.Agent.Spec.Model
	}
	if sc.Model == "" {
		sc.Model = p.defaultModel
	}
	metas := []json.RawMessage{sc.Agent.Spec.Metadata}
	for _, u := range sc.Users {
		metas = append(metas, u.Spec.Metadata)
	}
	metas = append(metas, snap.Spec.Metadata, snap.Request.Metadata)
	sc.Metadata = mergeMetadata(metas...)
	tools := make([]events.JulepTool, 0, len(sc.Agent.Tools)+len(snap.Request.Tools))
	named := map[string]bool{}
	for _, t := range sc.Agent.Tools {
		tools = append(tools, t.Tool)
		named[t.Tool.Name] = true
	}
	for _, t := range snap.Request.Tools {
		if !named[t.Name] {
			tools = append(tools, t)
		}
	}
	sc.Offered = Offer(tools, MergeToolParameters(metas[:len(metas)-1]...))
	return sc, nil
}

// mergeSettings puts the request's settings over the agent's default_settings.
func mergeSettings(defaults json.RawMessage, req events.JulepChatSettings) events.JulepChatSettings {
	var out events.JulepChatSettings
	_ = json.Unmarshal(defaults, &out)
	raw, _ := json.Marshal(req)
	_ = json.Unmarshal(raw, &out)
	return out
}

func mergeMetadata(metas ...json.RawMessage) map[string]any {
	out := map[string]any{}
	for _, raw := range metas {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	return out
}

// Prepared is a chat ready for the model: what its record says and the whole prompt.
type Prepared struct {
	Scope
	Event    events.SessionChatPrepared
	Messages []events.JulepMessage
}

// Prepare recalls docs, renders the templates and fits the history into the budget. An error with a code is the
// user's to read (a template that fails, a prompt over the budget); the turn fails with it.
func (p *Preparer) Prepare(ctx context.Context, snap Snapshot) (Prepared, error) {
	sc, err := p.Scope(ctx, snap)
	if err != nil {
		return Prepared{}, err
	}
	out := Prepared{Scope: sc, Event: events.SessionChatPrepared{TurnID: snap.Request.TurnID, Model: sc.Model,
		Tools: Names(sc.Offered)}}
	if snap.Request.Recall && snap.Spec.RecallOptions != nil {
		refs, query, err := p.recall(ctx, snap, sc)
		if err != nil {
			return Prepared{}, err
		}
		out.Event.Docs, out.Event.RecallQuery = refs, query
	}
	env := p.environment(snap, sc, out.Event.Docs)
	system, err := p.system(ctx, snap, sc, env)
	if err != nil {
		return Prepared{}, err
	}
	out.Event.System = system
	input := snap.Request.Messages
	if snap.Spec.RenderTemplates {
		if input, err = renderMessages(ctx, input, env); err != nil {
			return Prepared{}, err
		}
	}
	out.Event.Input = input
	if err := p.fit(snap, sc, &out); err != nil {
		return Prepared{}, err
	}
	return out, nil
}

// system renders the session's system template (or the agent's default, or Julep's).
func (p *Preparer) system(ctx context.Context, snap Snapshot, sc Scope, env map[string]any) (string, error) {
	src := jinja.DefaultSystemTemplate
	switch {
	case snap.Spec.SystemTemplate != nil:
		src = *snap.Spec.SystemTemplate
	case sc.Agent.Spec.DefaultSystemTemplate != nil:
		src = *sc.Agent.Spec.DefaultSystemTemplate
	}
	if strings.TrimSpace(src) == "" {
		return "", nil
	}
	out, err := jinja.Render(ctx, "system_template", src, env)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// renderMessages renders the contents that are templates.
func renderMessages(ctx context.Context, msgs []events.JulepMessage, env map[string]any) ([]events.JulepMessage, error) {
	out := make([]events.JulepMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if !jinja.IsTemplate(m.Content) {
			continue
		}
		text, err := jinja.Render(ctx, fmt.Sprintf("messages[%d].content", i), m.Content, env)
		if err != nil {
			return nil, err
		}
		out[i].Content = text
	}
	return out, nil
}

// environment is the variables templates see (Julep's chat environment).
func (p *Preparer) environment(snap Snapshot, sc Scope, docs []events.JulepDocRef) map[string]any {
	agents := make([]any, len(sc.Agents))
	for i, a := range sc.Agents {
		agents[i] = agentVars(a)
	}
	users := make([]any, len(sc.Users))
	for i, u := range sc.Users {
		users[i] = userVars(u)
	}
	var user any
	if len(users) > 0 {
		user = users[0]
	}
	docVars := make([]any, len(docs))
	for i, d := range docs {
		docVars[i] = map[string]any{"id": d.DocID, "title": d.Title, "content": []any{d.Snippet}, "metadata": raw(d.Metadata)}
	}
	tools := make([]any, len(sc.Offered))
	for i, o := range sc.Offered {
		tools[i] = TemplateTool(o)
	}
	situation := ""
	if snap.Spec.Situation != nil {
		situation = *snap.Spec.Situation
	}
	sess := map[string]any{"id": snap.SessionID, "situation": situation, "metadata": raw(snap.Spec.Metadata),
		"summary": snap.Summary.Summary, "render_templates": snap.Spec.RenderTemplates, "token_budget": snap.Spec.TokenBudget,
		"context_overflow": snap.Spec.ContextOverflow}
	return jinja.SessionVars{Agent: agentVars(sc.Agent), Agents: agents, User: user, Users: users, Session: sess,
		Situation: situation, Docs: docVars, Tools: tools, Settings: sc.Settings, Metadata: sc.Metadata}.Map()
}

func agentVars(a julep.Agent) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Spec.Name, "about": a.Spec.About, "model": a.Spec.Model,
		"instructions": raw(a.Spec.Instructions), "default_settings": raw(a.Spec.DefaultSettings),
		"metadata": raw(a.Spec.Metadata), "created_at": a.Created, "updated_at": a.Updated}
}

func userVars(u julep.User) map[string]any {
	return map[string]any{"id": u.ID, "name": u.Spec.Name, "about": u.Spec.About, "metadata": raw(u.Spec.Metadata),
		"created_at": u.Created, "updated_at": u.Updated}
}

// raw is a stored JSON value as a template sees it.
func raw(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	var out any
	if json.Unmarshal(v, &out) != nil {
		return nil
	}
	return out
}

// recall searches the agent's and the users' docs for what the conversation is about: the last messages embedded
// (vector, hybrid) and the last one's words (text, hybrid), as Julep's recall does.
func (p *Preparer) recall(ctx context.Context, snap Snapshot, sc Scope) ([]events.JulepDocRef, string, error) {
	o := *snap.Spec.RecallOptions
	var recent []events.JulepMessage
	for _, e := range snap.Entries {
		recent = append(recent, e.Message())
	}
	recent = append(recent, snap.Request.Messages...)
	var search []events.JulepMessage
	for _, m := range recent[max(0, len(recent)-o.NumSearchMessages):] {
		if (m.Role == "user" || m.Role == "assistant") && strings.TrimSpace(m.Content) != "" {
			search = append(search, m)
		}
	}
	if len(search) == 0 {
		return nil, "", nil
	}
	lines := make([]string, len(search))
	for i, m := range search {
		who := m.Name
		if who == "" {
			who = m.Role
		}
		lines[i] = who + ": " + m.Content
	}
	q := julepdocs.Query{Account: snap.Account, Mode: docindex.Mode(o.Mode), Limit: o.Limit, Alpha: o.Alpha, Confidence: o.Confidence,
		MMRStrength: o.MMRStrength, Text: clipRunes(strings.TrimSpace(search[len(search)-1].Content), o.MaxQueryLength, false)}
	if o.Mode != "text" {
		embedText := clipRunes(strings.TrimSpace(strings.Join(lines, "\n\n")), o.MaxQueryLength, true)
		vecs, err := p.docs.Embed(ctx, []string{embedText})
		if err != nil {
			return nil, "", fmt.Errorf("recall: %w", err)
		}
		q.Vector = vecs[0]
	}
	if len(o.MetadataFilter) > 0 {
		_ = json.Unmarshal(o.MetadataFilter, &q.MetadataFilter)
	}
	for _, u := range sc.Users {
		q.Owners = append(q.Owners, events.DocOwner{Role: "user", ID: u.ID})
	}
	q.Owners = append(q.Owners, events.DocOwner{Role: "agent", ID: sc.Agent.ID})
	refs, err := p.docs.Search(ctx, q)
	if err != nil {
		return nil, "", fmt.Errorf("recall: %w", err)
	}
	out := make([]events.JulepDocRef, len(refs))
	for i, r := range refs {
		out[i] = events.JulepDocRef{DocID: r.DocID, OwnerRole: r.Owner.Role, OwnerID: r.Owner.ID, Title: r.Title,
			SnippetIndex: r.Index, Snippet: r.Snippet, Score: r.Score, Distance: r.Distance, Metadata: r.Metadata}
	}
	return out, q.Text, nil
}

// clipRunes keeps at most n characters of s: its last when tail, else its first.
func clipRunes(s string, n int, tail bool) string {
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	if tail {
		return string(r[len(r)-n:])
	}
	return string(r[:n])
}

// fit chooses the history that goes into the prompt and counts it: all of it, after the latest summary when the
// session is adaptive; without its oldest turns when that is over the budget and the session truncates (adaptive
// too, as a last resort before its summary catches up). Over the budget otherwise, or with nothing left to drop,
// the chat fails saying by how much.
func (p *Preparer) fit(snap Snapshot, sc Scope, out *Prepared) error {
	model := sc.Model
	withTools := snap.Spec.ForwardToolCalls || snap.Request.RecallTools
	var head []events.JulepMessage
	if out.Event.System != "" {
		head = append(head, events.JulepMessage{Role: "system", Content: out.Event.System})
	}
	from := 0
	if snap.Spec.ContextOverflow == "adaptive" && snap.Summary.Upto > 0 {
		from = snap.Summary.Upto
		out.Event.SummaryUpto = from
		head = append(head, session.SummaryMessage(snap.Summary.Summary))
	}
	tools := make([]llm.Tool, len(sc.Offered))
	for i, o := range sc.Offered {
		tools[i] = o.Model
	}
	fixed := 3 + tokens.CountTools(model, tools) // 3 primes the reply
	for _, m := range head {
		fixed += p.count(model, m)
	}
	for _, m := range out.Event.Input {
		fixed += p.count(model, m)
	}
	hist := snap.Entries[min(from, len(snap.Entries)):]
	counts := make([]int, len(hist))
	total := fixed
	for i, e := range hist {
		if withTools || !e.RanTool() {
			counts[i] = p.count(model, e.Message())
			total += counts[i]
		}
	}
	budget := snap.Spec.TokenBudget
	drop := 0
	if budget != nil && total > *budget {
		if snap.Spec.ContextOverflow == "" {
			return errs.E(errs.Invalid, "the conversation comes to %d tokens, over the session's token_budget of %d, and its context_overflow is null: start a new session, or set context_overflow to truncate or adaptive",
				total, *budget)
		}
		// Drop whole turns, oldest first, so that no tool result is left without the call it answers.
		for drop < len(hist) && total > *budget {
			turn := hist[drop].Turn
			for drop < len(hist) && hist[drop].Turn == turn {
				total -= counts[drop]
				drop++
			}
		}
		if total > *budget {
			return errs.E(errs.Invalid, "the system message and the newest messages come to %d tokens, over the session's token_budget of %d, even with no history: raise token_budget or send less",
				total, *budget)
		}
	}
	out.Event.HistoryFrom, out.Event.Dropped, out.Event.PromptTokens = from+drop, drop, total
	out.Messages = append(head, session.HistoryMessages(hist[drop:], withTools)...)
	out.Messages = append(out.Messages, out.Event.Input...)
	return nil
}

// count is what one message costs in a prompt (remembering the counts of long texts: a session's history is
// counted again at every turn).
func (p *Preparer) count(model string, m events.JulepMessage) int {
	n := 3 + tokens.Count(model, m.Role) + p.counter.Count(model, m.Content)
	if m.Name != "" {
		n += tokens.Count(model, m.Name) + 1
	}
	if m.ToolCallID != "" {
		n += tokens.Count(model, m.ToolCallID)
	}
	for _, c := range m.ToolCalls {
		n += tokens.Count(model, c.Name) + p.counter.Count(model, c.Arguments)
	}
	return n
}

// Count is what messages cost in a prompt for model (the summarizer's measure of a history).
func (p *Preparer) Count(model string, msgs []events.JulepMessage) int {
	n := 0
	for _, m := range msgs {
		n += p.count(model, m)
	}
	return n
}

// LLMMessages are the messages as a model is sent them.
func LLMMessages(msgs []events.JulepMessage) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return out
}
