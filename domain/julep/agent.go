package julep

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Agent is a Julep agent as it stands: the view every face and read model shows.
type Agent struct {
	Object
	Spec  events.JulepAgentSpec `json:"spec"`
	Tools []Tool                `json:"tools,omitempty"`
}

// Tool is a tool of an agent.
type Tool struct {
	ID      string           `json:"id"`
	Tool    events.JulepTool `json:"tool"`
	Created time.Time        `json:"created"`
	Updated time.Time        `json:"updated"`
}

// AgentState is the agent aggregate rebuilt from its events.
type AgentState struct{ Agent }

// Apply folds one event: the only fold of agent events.
func (s *AgentState) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.JulepAgentCreated:
		s.Agent = Agent{Spec: d.Spec}
		s.born(e)
	case events.JulepAgentUpdated:
		s.Spec, s.Updated = d.Spec, e.Time
	case events.JulepAgentDeleted:
		s.Deleted, s.Updated = true, e.Time
	case events.JulepAgentToolCreated:
		s.Tools = append(s.Tools, Tool{ID: d.ToolID, Tool: d.Tool, Created: e.Time, Updated: e.Time})
	case events.JulepAgentToolUpdated:
		if i := s.toolIndex(d.ToolID); i >= 0 {
			s.Tools[i].Tool, s.Tools[i].Updated = d.Tool, e.Time
		}
	case events.JulepAgentToolDeleted:
		if i := s.toolIndex(d.ToolID); i >= 0 {
			s.Tools = append(s.Tools[:i:i], s.Tools[i+1:]...)
		}
	}
}

func (s *AgentState) toolIndex(id string) int {
	for i, t := range s.Tools {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// Tool finds a tool of the agent by its ID.
func (s *AgentState) Tool(id string) (Tool, bool) {
	if i := s.toolIndex(id); i >= 0 {
		return s.Tools[i], true
	}
	return Tool{}, false
}

const agentKind = "agent"

// CreateAgent makes an agent at id (derived from the request: the same request again appends nothing).
func CreateAgent(s *AgentState, account string, spec events.JulepAgentSpec) ([]events.Event, error) {
	return create(&s.Object, account, agentKind, events.JulepAgentCreated{Spec: spec})
}

// CreateOrUpdateAgent is POST /agents/{id}: a new agent, or the caller's replaced by spec.
func CreateOrUpdateAgent(s *AgentState, account string, spec events.JulepAgentSpec) ([]events.Event, error) {
	return createOrUpdate(&s.Object, account, agentKind, events.JulepAgentCreated{Spec: spec}, events.JulepAgentUpdated{Spec: spec})
}

// ReplaceAgent is PUT: the caller's agent gets spec as a whole.
func ReplaceAgent(s *AgentState, account, id string, spec events.JulepAgentSpec) ([]events.Event, error) {
	return change(&s.Object, account, agentKind, id, events.JulepAgentUpdated{Spec: spec})
}

// AgentPatch names the fields a PATCH changes (nil: unchanged). Metadata is merged into the old.
type AgentPatch struct {
	Name, About, Model, DefaultSystemTemplate, CanonicalName, Project *string
	Instructions, DefaultSettings, Metadata                           json.RawMessage
}

// PatchAgent changes only the fields the patch names.
func PatchAgent(s *AgentState, account, id string, p AgentPatch) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf(agentKind, id)
	}
	spec := s.Spec
	spec.Name = orString(spec.Name, p.Name)
	spec.About = orString(spec.About, p.About)
	spec.Model = orString(spec.Model, p.Model)
	spec.CanonicalName = orString(spec.CanonicalName, p.CanonicalName)
	spec.Project = orString(spec.Project, p.Project)
	if p.DefaultSystemTemplate != nil {
		spec.DefaultSystemTemplate = p.DefaultSystemTemplate
	}
	spec.Instructions = orRaw(spec.Instructions, p.Instructions)
	spec.DefaultSettings = orRaw(spec.DefaultSettings, p.DefaultSettings)
	spec.Metadata = events.MergeObjects(spec.Metadata, p.Metadata)
	return []events.Event{events.JulepAgentUpdated{Spec: spec}}, nil
}

// DeleteAgent deletes the caller's agent (retry: the same client's delete again, which finds it deleted).
func DeleteAgent(s *AgentState, account, id string, retry bool) ([]events.Event, error) {
	return remove(&s.Object, account, agentKind, id, retry, events.JulepAgentDeleted{})
}

// MaxTools bounds an agent's tools.
const MaxTools = 128

// AddTool adds a tool to the caller's agent. Tool IDs derive from the request, so the same request again adds
// nothing; a tool's name is unique among the agent's tools (it is the name the model calls it by).
func AddTool(s *AgentState, account, agentID, toolID string, t events.JulepTool) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf(agentKind, agentID)
	}
	if _, ok := s.Tool(toolID); ok {
		return nil, nil
	}
	if len(s.Tools) >= MaxTools {
		return nil, errs.InvalidField("tools", "an agent has at most %d tools", MaxTools)
	}
	if err := s.nameFree(t.Name, ""); err != nil {
		return nil, err
	}
	return []events.Event{events.JulepAgentToolCreated{ToolID: toolID, Tool: t}}, nil
}

// ReplaceTool gives a tool of the caller's agent a new definition (the whole tool after a PATCH or PUT).
func ReplaceTool(s *AgentState, account, agentID, toolID string, t events.JulepTool) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf(agentKind, agentID)
	}
	if _, ok := s.Tool(toolID); !ok {
		return nil, errs.NotFoundf("tool", toolID)
	}
	if err := s.nameFree(t.Name, toolID); err != nil {
		return nil, err
	}
	return []events.Event{events.JulepAgentToolUpdated{ToolID: toolID, Tool: t}}, nil
}

// DeleteTool removes a tool of the caller's agent.
func DeleteTool(s *AgentState, account, agentID, toolID string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf(agentKind, agentID)
	}
	if _, ok := s.Tool(toolID); !ok {
		return nil, errs.NotFoundf("tool", toolID)
	}
	return []events.Event{events.JulepAgentToolDeleted{ToolID: toolID}}, nil
}

func (s *AgentState) nameFree(name, except string) error {
	for _, t := range s.Tools {
		if t.ID != except && strings.EqualFold(t.Tool.Name, name) {
			return errs.InvalidField("name", "agent %s already has a tool named %q", s.ID, name)
		}
	}
	return nil
}
