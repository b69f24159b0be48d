package agents

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/internal/auth"
)

// Agent kinds: how a query reaches the agent.
const (
	KindBuiltin    = agent.KindBuiltin
	KindCodeShot   = agent.KindCodeShot
	KindStandalone = agent.KindStandalone
)

// Agent answers queries. Reply may take long (it is bounded by ctx) and must be safe for concurrent use: one Agent
// answers many sessions at once.
type Agent interface {
	Reply(ctx context.Context, q Query) (Reply, error)
}

// AgentFunc adapts a function to Agent.
type AgentFunc func(ctx context.Context, q Query) (Reply, error)

// Reply implements Agent.
func (f AgentFunc) Reply(ctx context.Context, q Query) (Reply, error) { return f(ctx, q) }

// Embed is an attachment as an agent sees it: a content type and a URI it can fetch (signed, expiring) — Fixie's
// `{"content_type", "uri"}`.
type Embed struct {
	ContentType string `json:"content_type"`
	URI         string `json:"uri"`
}

// Message is one message of a session's chat log.
type Message struct {
	ID        string           `json:"id"`
	Text      string           `json:"text"`
	Embeds    map[string]Embed `json:"embeds,omitempty"`
	SentBy    string           `json:"sent_by"`
	Type      string           `json:"type"` // events.MessageQuery, MessageResponse or MessageError
	InReplyTo string           `json:"in_reply_to,omitempty"`
	Time      time.Time        `json:"time"`
}

// Query is what an agent is asked.
type Query struct {
	// Session is the handle of the session the query belongs to.
	Session string
	// Message is the query itself.
	Message Message
	// History is the session's chat log before Message, oldest first: the context the agent answers in.
	History []Message
	// Caller is who asked: the session's owner account and the key that posted the message.
	Caller auth.Principal
	// ReplyID is the ID the reply will have in the session.
	ReplyID string
	// Stream passes a piece of the reply's text on to live subscribers as soon as the agent has it. It may be nil;
	// the text the agent returns in Reply is what the session keeps.
	Stream func(delta string)
	// Record appends a step of the agent's work (an event of the session aggregate: a func call, a delegation) to
	// the session's log, where replay shows it. label must be stable for the step ("funcall-1"), so that answering
	// the same query again after a crash records the step once. It may be nil.
	Record func(ctx context.Context, label string, step Step) error
}

// Step is a session event an agent records through Query.Record (its type must belong to the "session" aggregate).
type Step interface {
	EventType() string
}

// Reply is an agent's answer.
type Reply struct {
	Text   string
	Embeds map[string]Embed
}

// LiveDelta is a piece of a reply's text while an agent streams it, as published on the session's live subject
// (natsx.Names.LiveSubject("session", id)). It is not an event: nobody listening, it is lost; the reply event that
// follows holds the whole text.
type LiveDelta struct {
	Type string `json:"type"` // "delta"
	// MessageID is the ID the reply will have; InReplyTo the query it answers.
	MessageID string `json:"message_id"`
	InReplyTo string `json:"in_reply_to"`
	// Index counts the reply's deltas from 0, so a listener can tell a gap.
	Index int    `json:"index"`
	Text  string `json:"text"`
}
