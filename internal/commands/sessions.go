package commands

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// Limits of a message.
const (
	// MaxMessageText bounds a message's text, in bytes.
	MaxMessageText = 32 << 10
	// MaxMessageEmbeds bounds how many embeds one message carries.
	MaxMessageEmbeds = 16
	maxSessionName   = 200
)

// QueryCounter counts queries against an account's daily quota. The security issue's limits package implements
// it; CountQuery fails with an errs.RateLimited error once the quota is used up.
type QueryCounter interface {
	CountQuery(ctx context.Context, p auth.Principal) error
	DailyUsage(ctx context.Context, accountID string) (limit, used int, err error)
}

// Unlimited is a QueryCounter that counts nothing: every query is allowed. It reports the account's configured
// limit (or the default) and no usage.
type Unlimited struct {
	Views *projections.Runner
}

// CountQuery implements QueryCounter.
func (Unlimited) CountQuery(context.Context, auth.Principal) error { return nil }

// DailyUsage implements QueryCounter.
func (u Unlimited) DailyUsage(ctx context.Context, accountID string) (int, int, error) {
	a, _, err := projections.Get[projections.AccountView](ctx, u.Views, "accounts", projections.AccountKey(accountID))
	if err != nil {
		return 0, 0, err
	}
	if a.DailyQueryLimit > 0 {
		return a.DailyQueryLimit, 0, nil
	}
	return DefaultDailyQueryLimit, 0, nil
}

// DailyUsage reports an account's daily query limit and how much of it is used.
func (c *Commands) DailyUsage(ctx context.Context, accountID string) (limit, used int, err error) {
	return c.queries.DailyUsage(ctx, accountID)
}

// Session is the session aggregate rebuilt from its events: the state commands and the session runner decide on.
type Session struct {
	ID                  string
	Account             string
	Exists              bool
	Deleted             bool
	FrontendAgentID     string
	FrontendAgentHandle string
	// Messages is the chat log in order: queries, responses and failures.
	Messages []SessionMessage
	// Dispatched maps a query's message ID to the ID its reply will have.
	Dispatched map[string]string
	// Answered holds the queries that have a reply or a failure.
	Answered map[string]bool
	byID     map[string]int
	// seen holds the IDs of the session's events, so that a step recorded again is recorded once.
	seen map[string]bool
}

// SessionMessage is one message of a session's chat log.
type SessionMessage struct {
	ID        string
	Text      string
	Embeds    map[string]events.MessageEmbed
	SentBy    string
	Type      string
	InReplyTo string
	Time      time.Time
	// EventID is the ID of the event that created it; the runner derives its reactions' IDs from it.
	EventID string
}

// Apply folds one event.
func (s *Session) Apply(e events.Envelope) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[e.ID] = true
	switch d := e.Event.(type) {
	case events.SessionCreated:
		s.ID, s.Account, s.Exists = e.AggregateID, e.Account, true
		s.FrontendAgentID, s.FrontendAgentHandle = d.FrontendAgentID, d.FrontendAgentHandle
		s.Dispatched, s.Answered, s.byID = map[string]string{}, map[string]bool{}, map[string]int{}
	case events.SessionMessagePosted:
		s.add(SessionMessage{ID: d.MessageID, Text: d.Text, Embeds: d.Embeds, SentBy: d.SentBy, Type: d.Type,
			InReplyTo: d.InReplyTo, Time: e.Time, EventID: e.ID})
	case events.SessionQueryDispatched:
		s.Dispatched[d.MessageID] = d.ReplyID
	case events.SessionReplyPosted:
		s.Answered[d.InReplyTo] = true
		s.add(SessionMessage{ID: d.MessageID, Text: d.Text, Embeds: d.Embeds, SentBy: d.SentBy,
			Type: events.MessageResponse, InReplyTo: d.InReplyTo, Time: e.Time, EventID: e.ID})
	case events.SessionReplyFailed:
		s.Answered[d.InReplyTo] = true
		s.add(SessionMessage{ID: d.MessageID, Text: d.Error, SentBy: d.SentBy, Type: events.MessageError,
			InReplyTo: d.InReplyTo, Time: e.Time, EventID: e.ID})
	case events.SessionDeleted:
		s.Deleted = true
	}
}

func (s *Session) add(m SessionMessage) {
	if s.byID == nil {
		return // a message before the session was created: not ours to show
	}
	s.byID[m.ID] = len(s.Messages)
	s.Messages = append(s.Messages, m)
}

// Message finds a message by ID.
func (s *Session) Message(id string) (SessionMessage, bool) {
	i, ok := s.byID[id]
	if !ok {
		return SessionMessage{}, false
	}
	return s.Messages[i], true
}

// PendingBefore returns the first query before message id that has no answer yet ("" when every earlier query is
// answered): queries are answered in order.
func (s *Session) PendingBefore(id string) string {
	for _, m := range s.Messages {
		if m.ID == id {
			return ""
		}
		if m.Type == events.MessageQuery && !s.Answered[m.ID] {
			return m.ID
		}
	}
	return ""
}

func sessionRef(id string) events.Ref { return events.Ref{Type: "session", ID: id} }

// LoadedSession is a session as loaded, with the version it was loaded at: a caller that holds one lets the next
// append skip loading the session again.
type LoadedSession struct {
	Session
	Version events.Version
}

// updateSession appends what decide returns. Given the session as loaded (ls not nil), it decides on that state and
// appends expecting its version, sparing a load; when the session has moved on since, it falls back to
// events.Update, which reloads and decides again. Either way ls follows what was appended.
func (c *Commands) updateSession(ctx context.Context, id string, meta events.Meta, ls *LoadedSession, decide func(*Session) ([]events.Event, error)) (events.Appended, error) {
	if ls == nil {
		return events.Update(ctx, c.store, sessionRef(id), meta, decide)
	}
	evs, err := decide(&ls.Session)
	if err != nil || len(evs) == 0 {
		return events.Appended{Version: ls.Version}, err
	}
	res, err := c.store.Append(ctx, sessionRef(id), ls.Version, meta, evs...)
	if errors.Is(err, events.ErrConflict) {
		if res, err = events.Update(ctx, c.store, sessionRef(id), meta, decide); err != nil {
			return res, err
		}
		s, v, lerr := c.LoadSession(ctx, id)
		if lerr != nil {
			return res, lerr
		}
		*ls = LoadedSession{Session: s, Version: v}
		return res, nil
	}
	if err != nil {
		return res, err
	}
	for _, e := range res.Events {
		ls.Apply(e)
	}
	ls.Version = res.Version
	return res, nil
}

// ownSession checks that a session exists, is not deleted and belongs to the caller.
func ownSession(s *Session, actor auth.Principal, id string) error {
	if !s.Exists || s.Deleted || s.Account != actor.AccountID {
		return errs.NotFoundf("session", id)
	}
	return nil
}

// NewSession is what creating a session takes.
type NewSession struct {
	// FrontendAgent is the agent that answers: an ID or handle; "" = the built-in fixie agent.
	FrontendAgent string
	Name          string
	Description   string
}

// CreatedSession is a new session.
type CreatedSession struct {
	ID                  string
	FrontendAgentID     string
	FrontendAgentHandle string
	Seq                 uint64
}

// CreateSession opens a session of the caller's account.
func (c *Commands) CreateSession(ctx context.Context, actor auth.Principal, in NewSession) (CreatedSession, error) {
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
	agent, err := c.FindAgent(ctx, actor, ref)
	if errs.CodeOf(err) == errs.NotFound {
		return CreatedSession{}, errs.InvalidField("frontendAgentId", "no agent %q that you may use", ref)
	}
	if err != nil {
		return CreatedSession{}, err
	}
	id := events.NewPrefixedID("ses_")
	res, err := events.Update(ctx, c.store, sessionRef(id), actor.Meta(), func(s *Session) ([]events.Event, error) {
		if s.Exists {
			return nil, errs.E(errs.Conflict, "session %s exists", id)
		}
		return []events.Event{events.SessionCreated{Name: in.Name, Description: in.Description,
			FrontendAgentID: agent.ID, FrontendAgentHandle: agent.Handle}}, nil
	})
	if err != nil {
		return CreatedSession{}, fmt.Errorf("create session: %w", err)
	}
	return CreatedSession{ID: id, FrontendAgentID: agent.ID, FrontendAgentHandle: agent.Handle, Seq: res.LastSeq()},
		c.waitViews(ctx, res.LastSeq(), "sessions")
}

// DeleteSession closes a session of the caller's account.
func (c *Commands) DeleteSession(ctx context.Context, actor auth.Principal, id string) error {
	res, err := events.Update(ctx, c.store, sessionRef(id), actor.Meta(), func(s *Session) ([]events.Event, error) {
		if err := ownSession(s, actor, id); err != nil {
			return nil, err
		}
		return []events.Event{events.SessionDeleted{}}, nil
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return c.waitViews(ctx, res.LastSeq(), "sessions")
}

// LoadSession rebuilds a session from the log. It does not check who may see it: callers do (ownSession).
func (c *Commands) LoadSession(ctx context.Context, id string) (Session, events.Version, error) {
	var s Session
	if !validID(id) {
		return s, events.Version{}, nil
	}
	history, v, err := c.store.Load(ctx, sessionRef(id))
	if err != nil {
		return s, v, err
	}
	for _, e := range history {
		if e.Event != nil {
			s.Apply(e)
		}
	}
	return s, v, nil
}

// SessionOf loads a session of the caller's account: another account's is not found.
func (c *Commands) SessionOf(ctx context.Context, actor auth.Principal, id string) (Session, events.Version, error) {
	s, v, err := c.LoadSession(ctx, id)
	if err != nil {
		return s, v, err
	}
	return s, v, ownSession(&s, actor, id)
}

// EmbedSource is an embed a new message carries: an uploaded embed's ID, or a data: URI (stored as an embed), or
// an http(s) URI kept as it is (ContentType required).
type EmbedSource struct {
	EmbedID     string
	URI         string
	ContentType string
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
	Message SessionMessage
	Session string
	Seq     uint64
}

// PostMessage adds a user's query to a session of the caller's account, counting it against the daily quota.
// The session runner answers it.
func (c *Commands) PostMessage(ctx context.Context, actor auth.Principal, in NewSessionMessage) (PostedMessage, error) {
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
	// The session must be the caller's before anything is stored or counted.
	s, v, err := c.SessionOf(ctx, actor, in.Session)
	if err != nil {
		return PostedMessage{}, err
	}
	if in.InReplyTo != "" {
		if _, ok := s.Message(in.InReplyTo); !ok {
			return PostedMessage{}, errs.InvalidField("inReplyTo", "session %s has no message %q", in.Session, in.InReplyTo)
		}
	}
	embeds, err := c.MessageEmbeds(ctx, actor, in.Embeds)
	if err != nil {
		return PostedMessage{}, err
	}
	if err := c.queries.CountQuery(ctx, actor); err != nil {
		return PostedMessage{}, err
	}
	msgID := events.NewPrefixedID("msg_")
	ev := events.SessionMessagePosted{MessageID: msgID, Text: in.Text, Embeds: embeds, SentBy: sender(actor),
		Type: events.MessageQuery, InReplyTo: in.InReplyTo}
	meta := actor.Meta()
	meta.CorrelationID = msgID // everything that answers this query carries its ID
	res, err := c.updateSession(ctx, in.Session, meta, &LoadedSession{Session: s, Version: v}, func(s *Session) ([]events.Event, error) {
		if err := ownSession(s, actor, in.Session); err != nil {
			return nil, err
		}
		return []events.Event{ev}, nil
	})
	if err != nil {
		return PostedMessage{}, fmt.Errorf("post message to %s: %w", in.Session, err)
	}
	env := res.Events[0]
	out := PostedMessage{Session: in.Session, Seq: res.LastSeq(), Message: SessionMessage{ID: msgID, Text: ev.Text,
		Embeds: embeds, SentBy: ev.SentBy, Type: ev.Type, InReplyTo: ev.InReplyTo, Time: env.Time, EventID: env.ID}}
	return out, c.waitViews(ctx, res.LastSeq(), "sessions")
}

// sender is how a user's messages name their sender.
func sender(p auth.Principal) string {
	if p.Username != "" {
		return p.Username
	}
	return p.AccountID
}

// MessageEmbeds checks and stores what a message carries: uploaded embeds must be the caller's; data: URIs are
// stored as embeds; http(s) URIs are kept as they are.
func (c *Commands) MessageEmbeds(ctx context.Context, actor auth.Principal, in map[string]EmbedSource) (map[string]events.MessageEmbed, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]events.MessageEmbed, len(in))
	for key, src := range in {
		field := "embeds." + key
		if !agents.ValidEmbedKey(key) {
			return nil, errs.InvalidField("embeds", "embed key %q: use letters, digits and '_' (up to 64), so that the text can refer to it as #key", key)
		}
		switch {
		case src.EmbedID != "" && src.URI != "":
			return nil, errs.InvalidField(field, "embed %q: give an embedId or a uri, not both", key)
		case src.EmbedID != "":
			e, err := c.Embed(ctx, actor, src.EmbedID)
			if errs.CodeOf(err) == errs.NotFound {
				return nil, errs.InvalidField(field, "embed %q: no uploaded embed %q (upload it with POST /api/embeds first)", key, src.EmbedID)
			}
			if err != nil {
				return nil, err
			}
			out[key] = events.MessageEmbed{EmbedID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash}
		case strings.HasPrefix(src.URI, "data:"):
			ct, data, err := decodeDataURI(src.URI)
			if err != nil {
				return nil, errs.InvalidField(field, "embed %q: %v", key, err)
			}
			e, err := c.UploadEmbed(ctx, actor, ct, "", strings.NewReader(string(data)))
			if err != nil {
				return nil, err
			}
			out[key] = events.MessageEmbed{EmbedID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash}
		case src.URI != "":
			u, err := url.Parse(src.URI)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, errs.InvalidField(field, "embed %q: uri must be a data: URI or an absolute http(s) URL", key)
			}
			if _, _, err := mime.ParseMediaType(src.ContentType); err != nil {
				return nil, errs.InvalidField(field, "embed %q: an http(s) uri needs its contentType", key)
			}
			out[key] = events.MessageEmbed{URI: src.URI, ContentType: src.ContentType}
		default:
			return nil, errs.InvalidField(field, "embed %q: give an embedId (from POST /api/embeds) or a data: uri", key)
		}
	}
	return out, nil
}

// decodeDataURI reads "data:[<type>][;base64],<data>".
func decodeDataURI(uri string) (string, []byte, error) {
	head, body, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok {
		return "", nil, fmt.Errorf("a data: URI needs a ',' before its data")
	}
	b64 := strings.HasSuffix(head, ";base64")
	ct := strings.TrimSuffix(head, ";base64")
	if ct == "" {
		ct = "text/plain;charset=US-ASCII"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return "", nil, fmt.Errorf("data: URI media type %q: %v", ct, err)
	}
	if len(body) > MaxEmbedSize*4/3+4 {
		return "", nil, errs.E(errs.TooLarge, "a data: URI holds at most %d bytes", MaxEmbedSize)
	}
	if b64 {
		data, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return "", nil, fmt.Errorf("data: URI is not valid base64: %v", err)
		}
		return ct, data, nil
	}
	data, err := url.PathUnescape(body)
	if err != nil {
		return "", nil, fmt.Errorf("data: URI is not valid percent-encoding: %v", err)
	}
	return ct, []byte(data), nil
}

// ReplyID is the ID the reply to a query will have: derived from the event that posted the query, so that answering
// it twice cannot make two replies.
func ReplyID(queryEventID string) string { return "msg_" + events.DeriveID(queryEventID, "reply") }

// runnerMeta is the metadata of what the runner appends in reaction to a posted query.
func runnerMeta(cause events.Envelope, agentID string) events.Meta {
	actor := "system"
	if agentID != "" {
		actor = "agent:" + agentID
	}
	return events.Meta{Account: cause.Account, Actor: actor, CorrelationID: cause.CorrelationID, CausationID: cause.ID}
}

// The runner's appends take the session as it loaded it (ls, may be nil) and keep it current.

// DispatchQuery records that the query posted by `cause` goes to an agent. It reports false when there is nothing
// to do: the session is gone or the query already answered. Dispatching again after a crash (dispatched, never
// answered) is allowed: the agent is asked again.
func (c *Commands) DispatchQuery(ctx context.Context, cause events.Envelope, agent agents.Info, ls *LoadedSession) (bool, error) {
	q := cause.Event.(events.SessionMessagePosted)
	proceed := false
	_, err := c.updateSession(ctx, cause.AggregateID, runnerMeta(cause, agent.ID), ls, func(s *Session) ([]events.Event, error) {
		proceed = false
		if !s.Exists || s.Deleted || s.Answered[q.MessageID] {
			return nil, nil
		}
		proceed = true
		if _, ok := s.Dispatched[q.MessageID]; ok {
			return nil, nil
		}
		return []events.Event{events.WithID(events.DeriveID(cause.ID, "dispatch"), events.SessionQueryDispatched{
			MessageID: q.MessageID, ReplyID: ReplyID(cause.ID), AgentID: agent.ID, AgentHandle: agent.Handle})}, nil
	})
	if err != nil {
		return false, fmt.Errorf("dispatch query %s: %w", q.MessageID, err)
	}
	return proceed, nil
}

// RecordReply appends an agent's answer to the query posted by `cause`, unless it has one.
func (c *Commands) RecordReply(ctx context.Context, cause events.Envelope, agent agents.Info, text string, embeds map[string]events.MessageEmbed, ls *LoadedSession) error {
	q := cause.Event.(events.SessionMessagePosted)
	_, err := c.updateSession(ctx, cause.AggregateID, runnerMeta(cause, agent.ID), ls, func(s *Session) ([]events.Event, error) {
		if !s.Exists || s.Deleted || s.Answered[q.MessageID] {
			return nil, nil
		}
		return []events.Event{events.WithID(events.DeriveID(cause.ID, "reply"), events.SessionReplyPosted{
			MessageID: ReplyID(cause.ID), InReplyTo: q.MessageID, Text: text, Embeds: embeds, SentBy: agent.Handle,
			AgentID: agent.ID})}, nil
	})
	if err != nil {
		return fmt.Errorf("record reply to %s: %w", q.MessageID, err)
	}
	return nil
}

// RecordFailure appends why the query posted by `cause` has no answer, and the kind of failure (code), unless it has
// one.
func (c *Commands) RecordFailure(ctx context.Context, cause events.Envelope, agent agents.Info, reason string, code errs.Code, ls *LoadedSession) error {
	q := cause.Event.(events.SessionMessagePosted)
	sentBy := agent.Handle
	if sentBy == "" {
		sentBy = "contrail"
	}
	_, err := c.updateSession(ctx, cause.AggregateID, runnerMeta(cause, agent.ID), ls, func(s *Session) ([]events.Event, error) {
		if !s.Exists || s.Deleted || s.Answered[q.MessageID] {
			return nil, nil
		}
		return []events.Event{events.WithID(events.DeriveID(cause.ID, "reply"), events.SessionReplyFailed{
			MessageID: ReplyID(cause.ID), InReplyTo: q.MessageID, Error: reason, SentBy: sentBy, AgentID: agent.ID,
			Code: string(code)})}, nil
	})
	if err != nil {
		return fmt.Errorf("record failure of %s: %w", q.MessageID, err)
	}
	return nil
}

// RecordStep appends a step of an agent's work on the query posted by `cause`; label makes it idempotent.
func (c *Commands) RecordStep(ctx context.Context, cause events.Envelope, agent agents.Info, label string, step agents.Step) error {
	if agg, _ := events.SplitType(step.EventType()); agg != "session" {
		return fmt.Errorf("record step %s: only session events can be steps of a query", step.EventType())
	}
	_, err := events.Update(ctx, c.store, sessionRef(cause.AggregateID), runnerMeta(cause, agent.ID), func(s *Session) ([]events.Event, error) {
		id := events.DeriveID(cause.ID, "step:"+label)
		if !s.Exists || s.Deleted || s.seen[id] {
			return nil, nil
		}
		return []events.Event{events.WithID(id, step)}, nil
	})
	if err != nil {
		return fmt.Errorf("record step %s: %w", label, err)
	}
	return nil
}
