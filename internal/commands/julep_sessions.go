package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/julepchat"
)

// SessionRepo is the node's repository of sessions (Fixie's and Julep's: one aggregate).
type SessionRepo = eventstore.Repo[session.State, *session.State]

// JulepSessions are the commands on Julep sessions: open one (its agents and users the caller's), change its
// settings, delete it, and ask it a chat, which the Julep chat handler answers (handlers/julep).
type JulepSessions struct {
	repo   *SessionRepo
	agents *JulepAgents
	users  *JulepUsers
	hosts  apicall.Hosts
}

// NewJulepSessions returns the Julep session commands over the node's session repository.
func NewJulepSessions(repo *SessionRepo, agents *JulepAgents, users *JulepUsers, hosts apicall.Hosts) *JulepSessions {
	return &JulepSessions{repo: repo, agents: agents, users: users, hosts: hosts}
}

// Recall options' ranges and defaults, Julep's.
const (
	recallMaxLimit = 50
	recallMaxMsgs  = 50
)

// DefaultRecallOptions are Julep's defaults for a mode.
func DefaultRecallOptions(mode string) events.JulepRecallOptions {
	return events.JulepRecallOptions{Mode: mode, Limit: 10, NumSearchMessages: 4, MaxQueryLength: 1000,
		Confidence: 0.5, Alpha: 0.5, MMRStrength: 0.5, Lang: "en-US"}
}

// checkSessionSettings checks a Julep session's settings (all but its agents and users).
func checkSessionSettings(s events.JulepSessionSpec) error {
	if s.Situation != nil {
		if err := checkText("situation", *s.Situation, maxJulepSituation); err != nil {
			return err
		}
	}
	if s.SystemTemplate != nil {
		if err := checkTemplate("system_template", *s.SystemTemplate); err != nil {
			return err
		}
	}
	if s.TokenBudget != nil && (*s.TokenBudget < 1 || *s.TokenBudget > maxJulepTokenBudget) {
		return errs.InvalidField("token_budget", "token_budget must be between 1 and %d", maxJulepTokenBudget)
	}
	switch s.ContextOverflow {
	case "", "truncate", "adaptive":
	default:
		return errs.InvalidField("context_overflow", "context_overflow must be truncate, adaptive or null")
	}
	if s.ContextOverflow != "" && s.TokenBudget == nil {
		return errs.InvalidField("token_budget", "context_overflow %s needs a token_budget to keep the context under", s.ContextOverflow)
	}
	if err := checkJSONObject("metadata", s.Metadata); err != nil {
		return err
	}
	if r := s.RecallOptions; r != nil {
		return CheckRecallOptions("recall_options", *r)
	}
	return nil
}

// CheckRecallOptions checks recall options (a session's, or a search's) against Julep's ranges.
func CheckRecallOptions(field string, r events.JulepRecallOptions) error {
	switch r.Mode {
	case "vector", "text", "hybrid":
	default:
		return errs.InvalidField(field+".mode", "%s.mode must be vector, text or hybrid", field)
	}
	checks := []error{
		checkRange(field+".limit", float64(r.Limit), 1, recallMaxLimit),
		checkRange(field+".num_search_messages", float64(r.NumSearchMessages), 1, recallMaxMsgs),
		checkRange(field+".max_query_length", float64(r.MaxQueryLength), 100, 10000),
		checkRange(field+".confidence", r.Confidence, -1, 1),
		checkRange(field+".alpha", r.Alpha, 0, 1),
		checkRange(field+".mmr_strength", r.MMRStrength, 0, 0.999999),
		checkJSONObject(field+".metadata_filter", r.MetadataFilter),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkMembers checks a session's agents and users: at least one agent, all of them the caller's.
func (c *JulepSessions) checkMembers(ctx context.Context, actor auth.Principal, s events.JulepSessionSpec) error {
	if len(s.Agents) == 0 {
		return errs.InvalidField("agent", "a session needs an agent (agent or agents)")
	}
	if err := checkCount("agents", len(s.Agents), maxJulepAgents); err != nil {
		return err
	}
	if err := checkCount("users", len(s.Users), maxJulepUsers); err != nil {
		return err
	}
	for i, id := range s.Agents {
		field := fmt.Sprintf("agents[%d]", i)
		if err := ids.CheckUUID(field, id); err != nil {
			return err
		}
		if _, err := c.agents.Get(ctx, actor, id); errs.CodeOf(err) == errs.NotFound {
			return errs.InvalidField(field, "no agent %s of yours to chat with", id)
		} else if err != nil {
			return err
		}
	}
	for i, id := range s.Users {
		field := fmt.Sprintf("users[%d]", i)
		if err := ids.CheckUUID(field, id); err != nil {
			return err
		}
		if _, err := c.users.Get(ctx, actor, id); errs.CodeOf(err) == errs.NotFound {
			return errs.InvalidField(field, "no user %s of yours", id)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Create opens a Julep session of the caller's account; its ID derives from request.
func (c *JulepSessions) Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepSessionSpec) (Written[session.JulepView], error) {
	if err := c.check(ctx, actor, spec); err != nil {
		return Written[session.JulepView]{}, err
	}
	id := events.DeriveUUID(request, "session")
	return c.update(ctx, actor, id, "create session", func(s *session.State) ([]events.Event, error) {
		return session.CreateJulep(s, actor.AccountID, id, spec)
	})
}

// CreateOrUpdate is POST /sessions/{id}.
func (c *JulepSessions) CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepSessionSpec) (Written[session.JulepView], error) {
	if err := ids.CheckUUID("session_id", id); err != nil {
		return Written[session.JulepView]{}, err
	}
	if err := c.check(ctx, actor, spec); err != nil {
		return Written[session.JulepView]{}, err
	}
	return c.update(ctx, actor, id, "create or update session", func(s *session.State) ([]events.Event, error) {
		return session.CreateOrUpdateJulep(s, actor.AccountID, id, spec)
	})
}

func (c *JulepSessions) check(ctx context.Context, actor auth.Principal, spec events.JulepSessionSpec) error {
	if err := checkSessionSettings(spec); err != nil {
		return err
	}
	return c.checkMembers(ctx, actor, spec)
}

// Replace is PUT /sessions/{id}: new settings; the agents and users stay.
func (c *JulepSessions) Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepSessionSpec) (Written[session.JulepView], error) {
	if err := checkSessionSettings(spec); err != nil {
		return Written[session.JulepView]{}, err
	}
	return c.update(ctx, actor, id, "replace session", func(s *session.State) ([]events.Event, error) {
		return session.ReplaceJulep(s, actor.AccountID, id, spec)
	})
}

// Patch is PATCH /sessions/{id}.
func (c *JulepSessions) Patch(ctx context.Context, actor auth.Principal, id string, p session.SessionPatch) (Written[session.JulepView], error) {
	return c.update(ctx, actor, id, "patch session", func(s *session.State) ([]events.Event, error) {
		evs, err := session.PatchJulep(s, actor.AccountID, id, p)
		if err != nil {
			return nil, err
		}
		return evs, checkSessionSettings(evs[0].(events.SessionJulepUpdated).Spec)
	})
}

// Delete deletes the caller's Julep session.
func (c *JulepSessions) Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (Written[session.JulepView], error) {
	return c.update(ctx, actor, id, "delete session", func(s *session.State) ([]events.Event, error) {
		return session.DeleteJulep(s, actor.AccountID, id, retry)
	})
}

// Read calls fn with the caller's Julep session as the log holds it (at least up to atLeast); another account's
// session, or a Fixie session, is not found. fn must not keep the state.
func (c *JulepSessions) Read(ctx context.Context, actor auth.Principal, id string, atLeast uint64, fn func(s *session.State) error) error {
	if !ids.IsUUID(id) {
		return errs.NotFoundf("session", id)
	}
	return c.repo.Read(ctx, events.JulepAggregateID(actor.AccountID, id), atLeast, func(s *session.State, _ events.Version) error {
		if !s.OwnedJulep(actor.AccountID) {
			return errs.NotFoundf("session", id)
		}
		return fn(s)
	})
}

// Get returns the caller's Julep session as it stands.
func (c *JulepSessions) Get(ctx context.Context, actor auth.Principal, id string) (session.JulepView, error) {
	var v session.JulepView
	err := c.Read(ctx, actor, id, eventstore.Fresh, func(s *session.State) error {
		v = s.JulepView()
		return nil
	})
	return v, err
}

func (c *JulepSessions) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*session.State) ([]events.Event, error)) (Written[session.JulepView], error) {
	return writeJulep(ctx, c.repo, actor, id, "session", what, decide, func(s *session.State) session.JulepView { return s.JulepView() })
}

// ChatStarted is a chat as it was asked: the turn that answers it, and where the log holds its request.
type ChatStarted struct {
	TurnID string
	// Seq is the stream sequence of the turn's request (the request appended now, or before by the same request).
	Seq uint64
}

// CheckChat checks a chat's messages, settings and tools.
func (c *JulepSessions) CheckChat(r events.SessionChatRequested) error {
	if len(r.Messages) == 0 {
		return errs.InvalidField("messages", "a chat needs at least one message")
	}
	if err := checkCount("messages", len(r.Messages), maxJulepMessages); err != nil {
		return err
	}
	for i, m := range r.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "user", "assistant", "system", "tool":
		default:
			return errs.InvalidField(field+".role", "%s.role must be user, assistant, system or tool", field)
		}
		if err := checkText(field+".content", m.Content, maxJulepContent); err != nil {
			return err
		}
		if err := checkJulepName(field+".name", m.Name, false); err != nil {
			return err
		}
		if err := checkBytes(field+".tool_call_id", m.ToolCallID, maxToolCallIDBytes); err != nil {
			return err
		}
	}
	st := r.Settings
	checks := []error{checkChars("model", st.Model, maxModelChars), checkJSONObject("metadata", r.Metadata),
		checkCount("stop", len(st.Stop), maxJulepStops), checkCount("tools", len(r.Tools), maxTools)}
	if st.Temperature != nil {
		checks = append(checks, checkRange("temperature", *st.Temperature, 0, 5))
	}
	if st.TopP != nil {
		checks = append(checks, checkRange("top_p", *st.TopP, 0, 1))
	}
	if st.MaxTokens < 0 {
		checks = append(checks, errs.InvalidField("max_tokens", "max_tokens must be at least 1"))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for i, t := range r.Tools {
		field := fmt.Sprintf("tools[%d]", i)
		if err := julepchat.CheckTool(field, t, c.hosts); err != nil {
			return err
		}
		if names[t.Name] {
			return errs.InvalidField(field+".name", "two tools are named %q", t.Name)
		}
		names[t.Name] = true
	}
	return nil
}

// Chat asks the caller's Julep session a chat. The turn's ID derives from request, so the same request again (a
// client's retry) finds the turn it made and appends nothing: the caller awaits that turn's answer. A retry of a
// turn that failed (the model was down) is asked again as a new turn.
func (c *JulepSessions) Chat(ctx context.Context, actor auth.Principal, id, request string, retry bool, r events.SessionChatRequested) (ChatStarted, error) {
	if err := c.CheckChat(r); err != nil {
		return ChatStarted{}, err
	}
	for i, t := range r.Tools {
		if err := (julepRefs{agents: c.agents, users: c.users}).tool(ctx, actor, fmt.Sprintf("tools[%d]", i), t); err != nil {
			return ChatStarted{}, err
		}
	}
	r.TurnID = events.DeriveUUID(request, "turn")
	var existing uint64
	var autoRun bool
	err := c.Read(ctx, actor, id, eventstore.Fresh, func(s *session.State) error {
		if r.Agent == "" {
			r.Agent = s.Julep.Spec.Agents[0]
		} else if !slices.Contains(s.Julep.Spec.Agents, r.Agent) {
			return errs.InvalidField("agent", "agent %s is not an agent of session %s", r.Agent, id)
		}
		autoRun = s.Julep.Spec.AutoRunTools
		for range maxRetriedTurns {
			t, ok := s.Julep.Turn(r.TurnID)
			switch {
			case !ok:
				return nil
			case t.Failure != nil && retry:
				r.TurnID = events.DeriveUUID(r.TurnID, "again")
			default:
				existing = t.Seq
				return nil
			}
		}
		return errs.E(errs.Conflict, "this request has failed %d times; send it as a new request", maxRetriedTurns)
	})
	if err != nil || existing > 0 {
		return ChatStarted{TurnID: r.TurnID, Seq: existing}, err
	}
	if r.AutoRunTools != nil {
		autoRun = *r.AutoRunTools
	}
	if r.Stream && autoRun {
		if err := c.checkStreamTools(ctx, actor, r); err != nil {
			return ChatStarted{}, err
		}
	}
	meta := actor.Meta()
	meta.CorrelationID = r.TurnID
	key := events.JulepAggregateID(actor.AccountID, id)
	res, err := c.repo.Update(ctx, key, eventstore.Fresh, meta, func(s *session.State) ([]events.Event, error) {
		return session.RequestChat(s, actor.AccountID, id, r)
	})
	if err != nil {
		return ChatStarted{}, fmt.Errorf("chat with session %s: %w", id, err)
	}
	out := ChatStarted{TurnID: r.TurnID, Seq: res.LastSeq()}
	if len(res.Events) == 0 { // made meanwhile by the same request
		err = c.repo.Read(ctx, key, res.Version.Seq, func(s *session.State, _ events.Version) error {
			if t, ok := s.Julep.Turn(r.TurnID); ok {
				out.Seq = t.Seq
			}
			return nil
		})
	}
	return out, err
}

// maxRetriedTurns bounds the turns one request may make when its retries keep failing.
const maxRetriedTurns = 8

// checkStreamTools refuses, as Julep does, a streamed chat whose tools the platform would run: a stream carries one
// model answer, and a turn that runs tools has several.
func (c *JulepSessions) checkStreamTools(ctx context.Context, actor auth.Principal, r events.SessionChatRequested) error {
	a, err := c.agents.Get(ctx, actor, r.Agent)
	if err != nil {
		return err
	}
	tools := slices.Clone(r.Tools)
	for _, t := range a.Tools {
		tools = append(tools, t.Tool)
	}
	for _, t := range tools {
		if julepchat.Runs(t) {
			return errs.InvalidField("stream", "streaming is not supported when auto_run_tools runs the %s tool %q; chat without stream, or set auto_run_tools to false", t.Type, t.Name)
		}
	}
	return nil
}
