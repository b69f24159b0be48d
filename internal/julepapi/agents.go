package julepapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/jinja"
	"github.com/contrailhq/contrail/projections"
)

// agentBody is an agent as clients send it (create, create-or-update, PUT, PATCH).
type agentBody struct {
	Name                  present[string] `json:"name"`
	About                 present[string] `json:"about"`
	Model                 present[string] `json:"model"`
	Instructions          json.RawMessage `json:"instructions"`
	DefaultSettings       json.RawMessage `json:"default_settings"`
	DefaultSystemTemplate present[string] `json:"default_system_template"`
	Metadata              json.RawMessage `json:"metadata"`
	CanonicalName         present[string] `json:"canonical_name"`
	Project               present[string] `json:"project"`
}

// spec is the agent a create or a PUT makes: what is not sent takes Julep's default.
func (b agentBody) spec() events.JulepAgentSpec {
	return events.JulepAgentSpec{Name: b.Name.Value, About: b.About.Value, Model: b.Model.Value,
		Instructions: notNull(b.Instructions), DefaultSettings: notNull(b.DefaultSettings),
		DefaultSystemTemplate: b.DefaultSystemTemplate.ptr(), Metadata: notNull(b.Metadata),
		CanonicalName: b.CanonicalName.Value, Project: b.Project.Value}
}

// patch is what a PATCH changes.
func (b agentBody) patch() julep.AgentPatch {
	return julep.AgentPatch{Name: b.Name.ptr(), About: b.About.ptr(), Model: b.Model.ptr(),
		DefaultSystemTemplate: b.DefaultSystemTemplate.ptr(), CanonicalName: b.CanonicalName.ptr(), Project: b.Project.ptr(),
		Instructions: notNull(b.Instructions), DefaultSettings: notNull(b.DefaultSettings), Metadata: notNull(b.Metadata)}
}

// notNull is a JSON value as sent, nil when absent or null.
func notNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// agentJSON is Julep's Agent.
type agentJSON struct {
	ID                    string          `json:"id"`
	Name                  string          `json:"name"`
	About                 string          `json:"about"`
	Model                 string          `json:"model"`
	Instructions          json.RawMessage `json:"instructions"`
	DefaultSettings       json.RawMessage `json:"default_settings"`
	DefaultSystemTemplate string          `json:"default_system_template"`
	Metadata              json.RawMessage `json:"metadata"`
	CanonicalName         *string         `json:"canonical_name"`
	Project               *string         `json:"project"`
	CreatedAt             string          `json:"created_at"`
	UpdatedAt             string          `json:"updated_at"`
}

func agentOut(a julep.Agent) agentJSON {
	s := a.Spec
	out := agentJSON{ID: a.ID, Name: s.Name, About: s.About, Model: s.Model, Instructions: s.Instructions,
		DefaultSettings: orObject(s.DefaultSettings), DefaultSystemTemplate: jinja.DefaultSystemTemplate,
		Metadata: orObject(s.Metadata), CreatedAt: jsonTime(a.Created), UpdatedAt: jsonTime(a.Updated)}
	if len(out.Instructions) == 0 {
		out.Instructions = json.RawMessage("[]")
	}
	if s.DefaultSystemTemplate != nil {
		out.DefaultSystemTemplate = *s.DefaultSystemTemplate
	}
	if s.CanonicalName != "" {
		out.CanonicalName = &s.CanonicalName
	}
	if s.Project != "" {
		out.Project = &s.Project
	}
	return out
}

func (f *Face) createAgent(w http.ResponseWriter, r *http.Request) {
	createWith(f, w, r, agentOut, func(ctx context.Context, p auth.Principal, id string, b agentBody) (commands.Written[julep.Agent], error) {
		if !b.Name.Set || b.Name.Null {
			return commands.Written[julep.Agent]{}, errs.Missing("name")
		}
		return f.d.Agents.Create(ctx, p, id, b.spec())
	})
}

func (f *Face) createOrUpdateAgent(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "agent_id", agentOut, func(ctx context.Context, p auth.Principal, id string, b agentBody) (commands.Written[julep.Agent], error) {
		return f.d.Agents.CreateOrUpdate(ctx, p, id, b.spec())
	})
}

func (f *Face) replaceAgent(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "agent_id", agentOut, func(ctx context.Context, p auth.Principal, id string, b agentBody) (commands.Written[julep.Agent], error) {
		return f.d.Agents.Replace(ctx, p, id, b.spec())
	})
}

func (f *Face) patchAgent(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "agent_id", agentOut, func(ctx context.Context, p auth.Principal, id string, b agentBody) (commands.Written[julep.Agent], error) {
		return f.d.Agents.Patch(ctx, p, id, b.patch())
	})
}

func (f *Face) getAgent(w http.ResponseWriter, r *http.Request) {
	getWith(f, w, r, "agent_id", agentOut, f.d.Agents.Get)
}

func (f *Face) deleteAgent(w http.ResponseWriter, r *http.Request) {
	deleteWith(f, w, r, "agent_id", func(a julep.Agent) time.Time { return a.Updated }, f.d.Agents.Delete)
}

func (f *Face) listAgents(w http.ResponseWriter, r *http.Request) {
	listFrom(f, w, r, projections.JulepAgentsModel, principal(r).AccountID+".*", withMetadata, func(a julep.Agent) (listItem, any) {
		return listItem{created: a.Created, updated: a.Updated, metadata: a.Spec.Metadata}, agentOut(a)
	})
}

// toolJSON is Julep's Tool.
type toolJSON struct {
	ID          string                   `json:"id"`
	Name        string                   `json:"name"`
	Type        string                   `json:"type"`
	Description *string                  `json:"description"`
	Function    *events.JulepFunctionDef `json:"function"`
	System      *events.JulepSystemDef   `json:"system"`
	APICall     *events.JulepAPICallDef  `json:"api_call"`
	Integration json.RawMessage          `json:"integration"`
	CreatedAt   string                   `json:"created_at"`
	UpdatedAt   string                   `json:"updated_at"`
}

func toolOut(t julep.Tool) toolJSON {
	out := toolJSON{ID: t.ID, Name: t.Tool.Name, Type: t.Tool.Type, Function: t.Tool.Function, System: t.Tool.System,
		APICall: t.Tool.APICall, Integration: t.Tool.Integration, CreatedAt: jsonTime(t.Created), UpdatedAt: jsonTime(t.Updated)}
	if t.Tool.Description != "" {
		out.Description = &t.Tool.Description
	}
	if len(out.Integration) == 0 {
		out.Integration = json.RawMessage("null")
	}
	return out
}

// toolBody is a tool as clients send it.
type toolBody struct {
	Name        present[string]          `json:"name"`
	Type        present[string]          `json:"type"`
	Description present[string]          `json:"description"`
	Function    *events.JulepFunctionDef `json:"function"`
	System      *events.JulepSystemDef   `json:"system"`
	APICall     *events.JulepAPICallDef  `json:"api_call"`
	Integration json.RawMessage          `json:"integration"`
	Computer    json.RawMessage          `json:"computer_20241022"`
	TextEditor  json.RawMessage          `json:"text_editor_20241022"`
	Bash        json.RawMessage          `json:"bash_20241022"`
}

// tool is the tool the body defines.
func (b toolBody) tool() events.JulepTool {
	return events.JulepTool{Name: b.Name.Value, Type: b.Type.Value, Description: b.Description.Value,
		Function: b.Function, System: b.System, APICall: b.APICall, Integration: notNull(b.Integration)}
}

// over is the tool a PATCH makes of t: the fields sent replace its own.
func (b toolBody) over(t events.JulepTool) events.JulepTool {
	if v := b.Name.ptr(); v != nil {
		t.Name = *v
	}
	if v := b.Type.ptr(); v != nil {
		t.Type = *v
	}
	if v := b.Description.ptr(); v != nil {
		t.Description = *v
	}
	if b.Function != nil {
		t.Function = b.Function
	}
	if b.System != nil {
		t.System = b.System
	}
	if b.APICall != nil {
		t.APICall = b.APICall
	}
	if raw := notNull(b.Integration); raw != nil {
		t.Integration = raw
	}
	return t
}

func (f *Face) createTool(w http.ResponseWriter, r *http.Request) {
	var b toolBody
	id, err := f.readJSON(r, true, &b)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Agents.AddTool(r.Context(), principal(r), chi.URLParam(r, "agent_id"), id, b.tool())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	created(w, toolOut(res.Object))
}

func (f *Face) replaceTool(w http.ResponseWriter, r *http.Request) { f.changeTool(w, r, false) }
func (f *Face) patchTool(w http.ResponseWriter, r *http.Request)   { f.changeTool(w, r, true) }

func (f *Face) changeTool(w http.ResponseWriter, r *http.Request, patch bool) {
	var b toolBody
	if _, err := f.readJSON(r, false, &b); err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Agents.ReplaceTool(r.Context(), principal(r), chi.URLParam(r, "agent_id"), chi.URLParam(r, "tool_id"),
		func(old events.JulepTool) (events.JulepTool, error) {
			if patch {
				return b.over(old), nil
			}
			return b.tool(), nil
		})
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, toolOut(res.Object))
}

func (f *Face) deleteTool(w http.ResponseWriter, r *http.Request) {
	toolID := chi.URLParam(r, "tool_id")
	if _, err := f.d.Agents.DeleteTool(r.Context(), principal(r), chi.URLParam(r, "agent_id"), toolID); err != nil {
		f.WriteError(w, r, err)
		return
	}
	deleted(w, toolID, f.d.Store.Now())
}

func (f *Face) listTools(w http.ResponseWriter, r *http.Request) {
	a, err := f.d.Agents.Get(r.Context(), principal(r), chi.URLParam(r, "agent_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	p, err := parseList(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed, len(a.Tools))
	for i, t := range a.Tools {
		items[i] = listed{item: listItem{created: t.Created, updated: t.Updated}, out: toolOut(t)}
	}
	ok(w, p.page(items))
}
