package commands

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

// MessageEmbedder checks and stores what a new message carries (the embed commands do).
type MessageEmbedder interface {
	ForMessage(ctx context.Context, actor auth.Principal, in map[string]EmbedSource) (map[string]events.MessageEmbed, error)
}

// Fronts says which handler answers for a session's front agent (handlers/queries implements it), so that a query
// posted to an idle session goes to it in the same event. ok is false when the agent cannot be used (gone, or of a
// kind nobody answers for) or cannot be looked up now: the query is posted alone, and the session runner
// dispatches it or records why it cannot.
type Fronts interface {
	Front(ctx context.Context, account, agentID string) (t session.Target, ok bool)
}

// Sessions are the commands on sessions: open one, post a query to it, close it. The session runner and the
// handlers that answer queries append the rest (handlers/queries).
type Sessions struct {
	repo    *eventstore.Repo[session.State, *session.State]
	agents  *agents.Registry
	queries QueryCounter
	embeds  MessageEmbedder
	fronts  Fronts
}

// NewSessions returns the session commands over the node's session repository. fronts may be nil: every query is
// then dispatched by the session runner.
func NewSessions(repo *eventstore.Repo[session.State, *session.State], reg *agents.Registry, queries QueryCounter, embeds MessageEmbedder, fronts Fronts) *Sessions {
	return &Sessions{repo: repo, agents: reg, queries: queries, embeds: embeds, fronts: fronts}
}

// Repo is the repository the commands append through (the handlers share it).
func (c *Sessions) Repo() *eventstore.Repo[session.State, *session.State] { return c.repo }

// NewSession is what creating a session takes.
type NewSession struct {
	// FrontendAgent is the agent that answers: an ID or handle; "" = the built-in fixie agent.
	FrontendAgent string
	Name          string
	Description   string
}

// CreatedSession is a new session as it was appended: what a face shows without reading it back.
type CreatedSession struct {
	ID                  string
	Name                string
	Description         string
	FrontendAgentID     string
	FrontendAgentHandle string
	Created             time.Time
	// Seq is the stream sequence of the creation, what a read of the session waits for.
	Seq uint64
}

// Create opens a session of the caller's account.
func (c *Sessions) Create(ctx context.Context, actor auth.Principal, in NewSession) (CreatedSession, error) {
	if len(in.Name) > maxSessionName {
		return CreatedSession{}, errs.InvalidField("name", "name is longer than %d characters", maxSessionName)
	}
	if len(in.Description) > maxDescription {
		return CreatedSession{}, errs.InvalidField("description", "description is longer than %d characters", maxDescription)
	}
	ref := strings.TrimSpace(in.FrontendAgent)
	if ref == "" {
		ref = agents.FixieID
	}
	agent, _, err := c.agents.Find(ctx, actor.AccountID, actor.Username, ref)
	if code := errs.CodeOf(err); code == errs.NotFound || code == errs.Invalid {
		return CreatedSession{}, errs.InvalidField("frontendAgentId", "no agent %q that you may use", ref)
	}
	if err != nil {
		return CreatedSession{}, err
	}
	id := events.NewPrefixedID("ses_")
	res, err := c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(s *session.State) ([]events.Event, error) {
		return session.Create(s, id, events.SessionCreated{Name: in.Name, Description: in.Description,
			FrontendAgentID: agent.ID, FrontendAgentHandle: agent.Handle})
	})
	if err != nil {
		return CreatedSession{}, fmt.Errorf("create session: %w", err)
	}
	return CreatedSession{ID: id, Name: in.Name, Description: in.Description, FrontendAgentID: agent.ID,
		FrontendAgentHandle: agent.Handle, Created: res.Events[0].Time, Seq: res.LastSeq()}, nil
}

// Delete closes a session of the caller's account. It returns the stream sequence of the deletion.
func (c *Sessions) Delete(ctx context.Context, actor auth.Principal, id string) (uint64, error) {
	if !validID(id) {
		return 0, errs.NotFoundf("session", id)
	}
	res, err := c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(s *session.State) ([]events.Event, error) {
		return session.Delete(s, actor.AccountID, id)
	})
	if err != nil {
		return 0, fmt.Errorf("delete session %s: %w", id, err)
	}
	return res.LastSeq(), nil
}

// Get returns a session of the caller's account as the log holds it now, and where its history ends: another
// account's is not found.
func (c *Sessions) Get(ctx context.Context, actor auth.Principal, id string) (session.State, events.Version, error) {
	s, v, err := c.repo.Get(ctx, id, eventstore.Fresh)
	if err != nil {
		return session.State{}, events.Version{}, err
	}
	if !s.Owned(actor.AccountID) {
		return session.State{}, events.Version{}, errs.NotFoundf("session", id)
	}
	return s, v, nil
}

// NewSessionMessage is what posting a message to a session takes.
type NewSessionMessage struct {
	Session   string
	Text      string
	Embeds    map[string]EmbedSource
	InReplyTo string
}

// PostedMessage is a message as it was appended.
type PostedMessage struct {
	Message session.Message
	// Seq is the stream sequence of the message's event.
	Seq uint64
}

// Post adds a user's query to a session of the caller's account, counting it against the daily quota. The session
// runner answers it.
func (c *Sessions) Post(ctx context.Context, actor auth.Principal, in NewSessionMessage) (PostedMessage, error) {
	if strings.TrimSpace(in.Session) == "" {
		return PostedMessage{}, errs.Missing("session")
	}
	if strings.TrimSpace(in.Text) == "" {
		return PostedMessage{}, errs.InvalidField("text", "text must not be empty")
	}
	if len(in.Text) > MaxMessageText {
		return PostedMessage{}, errs.InvalidField("text", "text is %d bytes long; a message holds at most %d (32 KiB)", len(in.Text), MaxMessageText)
	}
	if !utf8.ValidString(in.Text) {
		return PostedMessage{}, errs.InvalidField("text", "text is not valid UTF-8")
	}
	if len(in.Embeds) > MaxMessageEmbeds {
		return PostedMessage{}, errs.InvalidField("embeds", "a message carries at most %d embeds", MaxMessageEmbeds)
	}
	for _, key := range agents.EmbedRefs(in.Text) {
		if _, ok := in.Embeds[key]; !ok {
			return PostedMessage{}, errs.InvalidField("text", "text refers to embed #%s, but the message carries no embed with key %q (attach one, or write ##%s for a literal '#')", key, key, key)
		}
	}
	// The session must be the caller's before anything is stored or counted. The state this node holds is enough
	// to decide on (the append expects its version: had the session been deleted since, it conflicts and the
	// decision is made again on the log); a session this node does not hold yet is read from the log.
	// Read, not Get: ownership is all the check needs, and a copy of a long session is not free.
	var owned, idle bool
	var frontID string
	var v events.Version
	check := func(atLeast uint64) error {
		return c.repo.Read(ctx, in.Session, atLeast, func(s *session.State, at events.Version) error {
			owned, v = s.Owned(actor.AccountID), at
			idle, frontID = s.Idle(), s.FrontAgentID
			return nil
		})
	}
	err := check(cachedOK)
	if err == nil && !owned {
		err = check(eventstore.Fresh)
	}
	if err != nil {
		return PostedMessage{}, err
	}
	if !owned {
		return PostedMessage{}, errs.NotFoundf("session", in.Session)
	}
	embeds, err := c.embeds.ForMessage(ctx, actor, in.Embeds)
	if err != nil {
		return PostedMessage{}, err
	}
	if err := c.queries.CountQuery(ctx, actor); err != nil {
		return PostedMessage{}, err
	}
	// The front agent is looked up only when the query would go at once; the decision checks again on the state
	// it appends to.
	var front *session.Target
	if idle && c.fronts != nil {
		if t, ok := c.fronts.Front(ctx, actor.AccountID, frontID); ok {
			front = &t
		}
	}
	msgID := events.NewPrefixedID("msg_")
	ev := events.SessionMessagePosted{MessageID: msgID, Text: in.Text, Embeds: embeds, SentBy: sender(actor),
		Type: events.MessageQuery, InReplyTo: in.InReplyTo}
	meta := actor.Meta()
	meta.CorrelationID = msgID // everything that answers this query carries its ID
	// The session was just read from the log: the append decides on that (a writer in between makes it conflict
	// and decide again), without a second read.
	res, err := c.repo.Update(ctx, in.Session, v.Seq, meta, func(s *session.State) ([]events.Event, error) {
		return session.Post(s, actor.AccountID, ev, front)
	})
	if err != nil {
		return PostedMessage{}, fmt.Errorf("post message to %s: %w", in.Session, err)
	}
	m, _ := session.ChatMessage(res.Events[0])
	return PostedMessage{Message: m, Seq: res.LastSeq()}, nil
}

// cachedOK asks a repository for the state it holds, whatever its age, when it holds any: for a decision whose
// append's expected version catches anything it missed.
const cachedOK uint64 = 1

// sender is how a user's messages name their sender.
func sender(p auth.Principal) string {
	if p.Username != "" {
		return p.Username
	}
	return p.AccountID
}
