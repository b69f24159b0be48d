package chats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/julepdocs"
)

// runTool runs the tool call the turn is at and records its result. A tool that fails gives the model the reason
// as its result (the model may try otherwise); the turn goes on.
func (h *Handlers) runTool(ctx context.Context, e events.Envelope, w work) error {
	call := w.next.ToolCall
	sc, err := h.cfg.Preparer.Scope(ctx, w.snap)
	if err != nil {
		if errs.As(err) == nil {
			return err
		}
		return h.fail(ctx, e, w.turn.ID, err)
	}
	o, err := julepchat.Find(sc.Offered, call.Name)
	ran := events.SessionChatToolRan{Call: w.next.Call, Index: w.next.Index, ToolCallID: call.ID, Name: call.Name}
	if err == nil {
		ran.Type = o.Tool.Type
		sctx, cancel := context.WithTimeout(ctx, h.cfg.StepTimeout)
		ran.Output, err = h.run(sctx, w, sc, o, call.Arguments)
		cancel()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ran.Error = errs.MessageOf(err)
		if errs.As(err) == nil {
			ran.Error = err.Error()
		}
	}
	return h.update(ctx, e, w.turn.ID, func(s *session.State, t *session.Turn) []events.Event {
		return session.RanTool(s, t, ran)
	})
}

// run runs one platform tool and returns its result as JSON text.
func (h *Handlers) run(ctx context.Context, w work, sc julepchat.Scope, o julepchat.Offered, args string) (string, error) {
	switch o.Tool.Type {
	case julepchat.ToolAPICall:
		if h.cfg.APICalls == nil || o.Tool.APICall == nil {
			return "", errors.New("api_call tools are not set up on this server")
		}
		res, err := h.cfg.APICalls.Call(ctx, *o.Tool.APICall, json.RawMessage(args))
		if err != nil {
			return "", err
		}
		return jsonText(res)
	case julepchat.ToolSystem:
		if o.Tool.System == nil {
			return "", errors.New("the system tool has no definition")
		}
		return h.system(ctx, w, sc, *o.Tool.System, args)
	}
	return "", fmt.Errorf("%s tools are run by the client, not the platform", o.Tool.Type)
}

// systemArgs are what the model may pass a system tool (over the tool's own arguments).
type systemArgs struct {
	Text  string `json:"text"`
	Limit int    `json:"limit"`
}

// readSystemArgs reads the arguments of a call over the tool's own.
func readSystemArgs(d events.JulepSystemDef, args string) (systemArgs, error) {
	var a systemArgs
	_ = json.Unmarshal(d.Arguments, &a)
	if err := json.Unmarshal([]byte(args), &a); err != nil && strings.TrimSpace(args) != "" {
		return a, fmt.Errorf("the arguments are not a JSON object: %w", err)
	}
	return a, nil
}

// system runs a system operation on the session's own resources, as the session's account.
func (h *Handlers) system(ctx context.Context, w work, sc julepchat.Scope, d events.JulepSystemDef, args string) (string, error) {
	op, ok := julepchat.SystemOpOf(d)
	if !ok {
		return "", fmt.Errorf("%s is not a system operation this server runs", op.Key)
	}
	a, err := readSystemArgs(d, args)
	if err != nil {
		return "", err
	}
	owner, err := h.owner(d, sc)
	if err != nil {
		return "", err
	}
	if op.Key == "session.history" {
		entries := w.snap.Entries[max(0, len(w.snap.Entries)-50):]
		type line struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		out := make([]line, len(entries))
		for i, en := range entries {
			out[i] = line{Role: en.Role, Content: en.Content}
		}
		return jsonText(out)
	}
	return h.operate(ctx, w.snap.Account, op.Key, a, owner)
}

// RunSystem runs a system tool for a task of account's agent: the operation acts on the tool's resource_id, else
// on the agent itself. Arguments given over the tool's own come as a JSON object.
func (h *Handlers) RunSystem(ctx context.Context, account, agent string, d events.JulepSystemDef, args string) (string, error) {
	op, ok := julepchat.SystemOpOf(d)
	if !ok || op.Key == "session.history" {
		return "", fmt.Errorf("%s is not a system operation a task runs", op.Key)
	}
	a, err := readSystemArgs(d, args)
	if err != nil {
		return "", err
	}
	owner := events.DocOwner{Role: d.Resource, ID: d.ResourceID}
	if owner.ID == "" {
		if d.Resource != "agent" {
			return "", errs.E(errs.Invalid, "a task's %s tool names no %s (system.resource_id)", op.Key, d.Resource)
		}
		owner.ID = agent
	}
	return h.operate(ctx, account, op.Key, a, owner)
}

// operate runs one system operation on owner's resources, as account.
func (h *Handlers) operate(ctx context.Context, account, key string, a systemArgs, owner events.DocOwner) (string, error) {
	switch key {
	case "agent.doc.search", "user.doc.search":
		if strings.TrimSpace(a.Text) == "" {
			return "", errs.InvalidField("text", "a doc search needs text")
		}
		if err := h.visible(ctx, account, owner); err != nil {
			return "", err
		}
		limit := a.Limit
		if limit < 1 || limit > 50 {
			limit = 10
		}
		refs, err := h.cfg.Docs.Search(ctx, julepdocs.Query{Account: account, Owners: []events.DocOwner{owner}, Mode: docindex.Hybrid,
			Text: a.Text, Limit: limit, Alpha: 0.5})
		if err != nil {
			return "", err
		}
		type hit struct {
			ID      string  `json:"id"`
			Title   string  `json:"title"`
			Snippet string  `json:"snippet"`
			Score   float64 `json:"score"`
		}
		out := make([]hit, len(refs))
		for i, r := range refs {
			out[i] = hit{ID: r.DocID, Title: r.Title, Snippet: r.Snippet, Score: r.Score}
		}
		return jsonText(out)
	case "agent.doc.list", "user.doc.list":
		if err := h.visible(ctx, account, owner); err != nil {
			return "", err
		}
		limit := a.Limit
		if limit < 1 || limit > 100 {
			limit = 20
		}
		docs, err := h.cfg.DocList.ListDocs(ctx, account, owner, limit)
		if err != nil {
			return "", err
		}
		type item struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		}
		out := make([]item, len(docs))
		for i, d := range docs {
			out[i] = item{ID: d.ID, Title: d.Title}
		}
		return jsonText(out)
	case "agent.get":
		a, err := h.cfg.Lookup.JulepAgent(ctx, account, owner.ID)
		if err != nil {
			return "", err
		}
		return jsonText(map[string]any{"id": a.ID, "name": a.Spec.Name, "about": a.Spec.About, "model": a.Spec.Model,
			"metadata": a.Spec.Metadata})
	case "user.get":
		u, err := h.cfg.Lookup.JulepUser(ctx, account, owner.ID)
		if err != nil {
			return "", err
		}
		return jsonText(map[string]any{"id": u.ID, "name": u.Spec.Name, "about": u.Spec.About, "metadata": u.Spec.Metadata})
	}
	return "", fmt.Errorf("%s is not a system operation this server runs", key)
}

// owner is the resource a system tool acts on: its resource_id, else the chat's agent or the session's first user.
func (h *Handlers) owner(d events.JulepSystemDef, sc julepchat.Scope) (events.DocOwner, error) {
	o := events.DocOwner{Role: d.Resource, ID: d.ResourceID}
	if o.ID != "" {
		return o, nil
	}
	switch d.Resource {
	case "agent":
		o.ID = sc.Agent.ID
	case "user":
		if len(sc.Users) == 0 {
			return o, errs.E(errs.Invalid, "the session has no user, and the tool names none (system.resource_id)")
		}
		o.ID = sc.Users[0].ID
	}
	return o, nil
}

// visible checks that the owner is the account's.
func (h *Handlers) visible(ctx context.Context, account string, o events.DocOwner) error {
	var err error
	switch o.Role {
	case "agent":
		_, err = h.cfg.Lookup.JulepAgent(ctx, account, o.ID)
	case "user":
		_, err = h.cfg.Lookup.JulepUser(ctx, account, o.ID)
	default:
		err = errs.E(errs.Invalid, "docs belong to agents and users, not to a %s", o.Role)
	}
	return err
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
