package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/nats-io/nats.go"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/graph/model"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// Bounds of sendSessionMessage's wait for the reply.
const (
	defaultReplyWait = 60 * time.Second
	maxReplyWait     = 300 * time.Second
)

func sessionModel(v projections.SessionView) generated.Session {
	return generated.Session{Handle: v.ID, Name: optional(v.Name), Description: optional(v.Description),
		FrontendAgentID: v.FrontendAgentID, Created: v.Created, Modified: v.Modified, Cursor: v.ID}
}

// AllSessions lists the caller's sessions, newest first.
func (r queryResolver) AllSessions(ctx context.Context, first *int, after *string) ([]generated.Session, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.d.Views.ListCaughtUp(ctx, projections.Sessions{}); err != nil {
		return nil, err
	}
	views, err := projections.ListAll[projections.SessionView](ctx, r.d.Views, "sessions", projections.SessionsFilter(p.AccountID))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(views, func(a, b projections.SessionView) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	out := make([]generated.Session, 0, len(views))
	for _, v := range views {
		out = append(out, sessionModel(v))
	}
	return page(out, func(s generated.Session) string { return s.Cursor }, first, after, "session")
}

// SessionByHandle finds a session of the caller's.
func (r queryResolver) SessionByHandle(ctx context.Context, handle string) (*generated.Session, error) {
	if err := ids.Check("handle", ids.Session, handle); err != nil {
		return nil, err
	}
	v, err := r.session(ctx, handle)
	if err != nil {
		return nil, err
	}
	s := sessionModel(v)
	return &s, nil
}

// session is a session of the caller's (sessionRead), without its messages.
func (r *Resolver) session(ctx context.Context, handle string) (projections.SessionView, error) {
	v, _, err := r.sessionRead(ctx, handle, false)
	return v, err
}

// sessionRead is a session of the caller's and, with messages, its chat log: once the sessions read model shows the
// session's last event it folds, as the model holds them, or else, past the wait (as long as Shows would), folded
// from the log with the model's own Apply (projections.FoldAggregate). A session deleted a moment ago is not
// found, one made a moment ago (maybe on another node) is, and an agent's reply a client saw in a subscription is
// never left out because the model stood still a moment. A log that cannot be read either is an error saying the
// model is behind, not what the model holds. A Julep session is not one of this face's: the model keeps none.
// handle must be a valid session ID (it names subjects).
func (r *Resolver) sessionRead(ctx context.Context, handle string, messages bool) (
	projections.SessionView, []projections.MessageView, error) {
	p, err := principal(ctx)
	if err != nil {
		return projections.SessionView{}, nil, err
	}
	key, filter := projections.SessionKey(p.AccountID, handle), projections.SessionMessagesFilter(p.AccountID, handle)
	docs, shown, err := r.d.Views.ShownOrFoldedDocs(ctx, projections.Sessions{}, events.Ref{Type: "session", ID: handle})
	if err != nil {
		return projections.SessionView{}, nil, projections.Behind(err, "the session")
	}
	if shown {
		v, ok, err := projections.GetLatest[projections.SessionView](ctx, r.d.Views, "sessions", key)
		if err != nil {
			return projections.SessionView{}, nil, err
		}
		if !ok {
			return projections.SessionView{}, nil, errs.NotFoundf("session", handle)
		}
		if !messages {
			return v, nil, nil
		}
		views, err := projections.ListAll[projections.MessageView](ctx, r.d.Views, "sessions", filter)
		return v, views, err
	}
	found, err := projections.DecodeMatching[projections.SessionView](projections.Sessions{}, docs, key)
	if err != nil {
		return projections.SessionView{}, nil, fmt.Errorf("session %s folded from the log: %w", handle, err)
	}
	if len(found) == 0 {
		return projections.SessionView{}, nil, errs.NotFoundf("session", handle)
	}
	if !messages {
		return found[0], nil, nil
	}
	views, err := projections.DecodeMatching[projections.MessageView](projections.Sessions{}, docs, filter)
	if err != nil {
		return projections.SessionView{}, nil, fmt.Errorf("session %s's messages folded from the log: %w", handle, err)
	}
	return found[0], views, nil
}

// sessionView is a session as the read model would show it, from its state.
func sessionView(s session.State) projections.SessionView {
	v := projections.SessionView{ID: s.ID, Account: s.Account, Name: s.Name, Description: s.Description,
		FrontendAgentID: s.FrontAgentID, FrontendAgentHandle: s.FrontAgentHandle, Created: s.Created,
		Modified: s.Modified}
	for _, m := range s.Messages {
		for k, em := range m.Embeds {
			if v.Embeds == nil {
				v.Embeds = map[string]events.MessageEmbed{}
			}
			v.Embeds[k] = em
		}
	}
	return v
}

// Messages is the session's chat log, oldest first.
func (r sessionResolver) Messages(ctx context.Context, obj *generated.Session, first *int, after *string) ([]model.Message, error) {
	_, views, err := r.sessionRead(ctx, obj.Handle, true)
	if err != nil {
		return nil, err
	}
	// The chat log's order is the log's: each message carries the sequence of the event that made it.
	slices.SortFunc(views, func(a, b projections.MessageView) int { return cmp.Compare(a.Seq, b.Seq) })
	out := make([]model.Message, 0, len(views))
	for _, m := range views {
		mm, err := r.messageModel(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, mm)
	}
	return page(out, func(m model.Message) string { return m.ID }, first, after, "message")
}

// Embeds lists every embed the session's messages carry, by key.
func (r sessionResolver) Embeds(ctx context.Context, obj *generated.Session) ([]model.EmbedEntry, error) {
	v, err := r.session(ctx, obj.Handle)
	if err != nil {
		return nil, err
	}
	return r.embedEntries(ctx, v.Embeds)
}

func (r *Resolver) messageModel(ctx context.Context, m projections.MessageView) (model.Message, error) {
	embeds, err := r.embedEntries(ctx, m.Embeds)
	if err != nil {
		return model.Message{}, err
	}
	return model.Message{ID: m.ID, Text: m.Text, SentBy: model.Sender{Handle: m.SentBy}, Type: m.Type,
		Timestamp: m.Time, Embeds: embeds, InReplyToID: m.InReplyTo, SessionID: m.SessionID}, nil
}

// embedEntries shows a message's (or session's) embeds with fresh signed URLs, sorted by key. Embeds of a session
// belong to the session's account, which is the caller's.
func (r *Resolver) embedEntries(ctx context.Context, in map[string]events.MessageEmbed) ([]model.EmbedEntry, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	account := p.AccountID
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]model.EmbedEntry, 0, len(keys))
	for _, k := range keys {
		em := in[k]
		entry := model.EmbedEntry{Key: k, ContentType: em.ContentType, URI: em.URI}
		if em.EmbedID != "" {
			uri, err := r.d.Embeds.EmbedURL(ctx, em.EmbedID)
			if err != nil {
				return nil, err
			}
			entry.URI = uri
			entry.Embed = &model.Embed{ID: em.EmbedID, ContentType: em.ContentType, ContentHash: em.ContentHash,
				URL: uri, OwnerAccount: account}
			if size, created, ok := r.embedInfo(ctx, account, em.EmbedID); ok {
				entry.Embed.Size, entry.Embed.Created = size, &created
			}
		}
		out = append(out, entry)
	}
	return out, nil
}

// embedInfo is an embed's size and upload time: from the embeds read model, or from the log when the model does
// not show it yet (an embed stored with the message that carries it, a moment ago).
func (r *Resolver) embedInfo(ctx context.Context, account, id string) (int, time.Time, bool) {
	v, ok, err := projections.Get[projections.EmbedView](ctx, r.d.Views, "embeds", projections.EmbedKey(account, id))
	if err == nil && ok {
		return int(v.Size), v.Created, true
	}
	if r.d.EmbedLog == nil {
		return 0, time.Time{}, false
	}
	e, err := r.d.EmbedLog.Load(ctx, id)
	if err != nil || !e.Exists || e.Account != account {
		return 0, time.Time{}, false
	}
	return int(e.Size), e.Created, true
}

// InReplyTo is the message this one answers.
func (r messageResolver) InReplyTo(ctx context.Context, obj *model.Message) (*model.Message, error) {
	if obj.InReplyToID == "" {
		return nil, nil
	}
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	stub := &model.Message{ID: obj.InReplyToID, SessionID: obj.SessionID, Embeds: []model.EmbedEntry{}}
	if selectsOnly(ctx, "Message", "id", "__typename") {
		// What the reply shows of the query it answers is often its ID alone (a client matching replies to its
		// queries, on every reply a subscription streams): that needs no read.
		return stub, nil
	}
	v, ok, err := projections.Get[projections.MessageView](ctx, r.d.Views, "sessions", projections.SessionMessageKey(p.AccountID, obj.SessionID, obj.InReplyToID))
	if err != nil {
		return nil, err
	}
	if !ok {
		// Not in the read model yet (a message fresh from a subscription): its ID is what there is.
		return stub, nil
	}
	m, err := r.messageModel(ctx, v)
	return &m, err
}

// Owner of an embed is shown to the caller for its own embeds.
func (r embedResolver) Owner(ctx context.Context, obj *model.Embed) (*model.User, error) {
	p, err := principal(ctx)
	if err != nil || obj.OwnerAccount != p.AccountID {
		return nil, err
	}
	return &model.User{Username: p.Username, AccountID: p.AccountID}, nil
}

// CreateSession opens a session answered by the given agent (default fixie). The answer is made from what the
// command appended: the read model may not show the session yet.
func (r mutationResolver) CreateSession(ctx context.Context, in *generated.SessionInput) (*generated.SessionPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var ns commands.NewSession
	if in != nil {
		// Left out, the built-in fixie agent answers; given, it must name an agent (" " names none).
		if in.FrontendAgentID != nil {
			if err := checkAgentRef("frontendAgentId", *in.FrontendAgentID); err != nil {
				return nil, err
			}
		}
		ns = commands.NewSession{FrontendAgent: trimmed(in.FrontendAgentID), Name: trimmed(in.Name), Description: trimmed(in.Description)}
	}
	s, err := r.d.Sessions.Create(ctx, p, ns)
	if err != nil {
		return nil, err
	}
	r.showWrite(ctx, "sessions", s.Seq)
	m := sessionModel(projections.SessionView{ID: s.ID, Account: p.AccountID, Name: s.Name, Description: s.Description,
		FrontendAgentID: s.FrontendAgentID, FrontendAgentHandle: s.FrontendAgentHandle, Created: s.Created, Modified: s.Created})
	return &generated.SessionPayload{Session: &m}, nil
}

// showWrite lets a read model show a write the caller just made before the mutation answers, so that the
// client's next read (a list of its sessions) has it; briefly: the write is committed either way, and the answer is
// made from what the command returned.
func (r *Resolver) showWrite(ctx context.Context, model string, seq uint64) {
	wctx, cancel := context.WithTimeout(ctx, readOwnWriteWait)
	defer cancel()
	_ = r.d.Views.WaitFor(wctx, model, seq)
}

// readOwnWriteWait bounds how long a mutation waits for its read model to show its write.
const readOwnWriteWait = 2 * time.Second

// DeleteSession closes a session of the caller's.
func (r mutationResolver) DeleteSession(ctx context.Context, handle string) (*generated.SessionPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := ids.Check("handle", ids.Session, handle); err != nil {
		return nil, err
	}
	s, _, err := r.d.Sessions.Get(ctx, p, handle)
	if err != nil {
		return nil, err
	}
	seq, err := r.d.Sessions.Delete(ctx, p, handle)
	if err != nil {
		return nil, err
	}
	r.showWrite(ctx, "sessions", seq)
	m := sessionModel(sessionView(s))
	return &generated.SessionPayload{Session: &m}, nil
}

// SendSessionMessage posts a query; with wait it also waits (bounded) for the reply.
func (r mutationResolver) SendSessionMessage(ctx context.Context, in generated.MessageInput, wait *bool, timeoutSeconds *int) (*generated.MessagePayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	timeout := defaultReplyWait
	if timeoutSeconds != nil {
		if *timeoutSeconds < 0 || time.Duration(*timeoutSeconds)*time.Second > maxReplyWait {
			return nil, errs.InvalidField("timeoutSeconds", "timeoutSeconds must be between 0 and %d", int(maxReplyWait/time.Second))
		}
		timeout = time.Duration(*timeoutSeconds) * time.Second
	}
	if err := checkMessageInput(in); err != nil {
		return nil, err
	}
	nm := commands.NewSessionMessage{Session: in.Session, Text: in.Text, InReplyTo: trimmed(in.InReplyTo)}
	if len(in.Embeds) > 0 {
		nm.Embeds = make(map[string]commands.EmbedSource, len(in.Embeds))
		for i, e := range in.Embeds {
			if _, dup := nm.Embeds[e.Key]; dup {
				return nil, errs.InvalidField(fmt.Sprintf("embeds[%d].key", i), "the key is given twice")
			}
			nm.Embeds[e.Key] = commands.EmbedSource{EmbedID: trimmed(e.EmbedID), URI: trimmed(e.URI), ContentType: trimmed(e.ContentType)}
		}
	}
	posted, err := r.d.Sessions.Post(ctx, p, nm)
	if err != nil {
		return nil, err
	}
	msg, err := r.messageModel(ctx, posted.Message)
	if err != nil {
		return nil, err
	}
	out := &generated.MessagePayload{Message: &msg}
	if wait == nil || !*wait {
		return out, nil
	}
	reply, failure, err := r.awaitReply(ctx, in.Session, posted.Message.ID, posted.Seq, timeout)
	if err != nil {
		return nil, err
	}
	out.Response, out.TimedOut = reply, reply == nil
	if failure != nil {
		// The answer is a failure: the reply says why, and an error entry says so to clients that read errors.
		failure.Path = graphql.GetPath(ctx)
		graphql.AddError(ctx, failure)
	}
	return out, nil
}

// failureError is the error entry of a failed answer: its text, and extensions.code by the code the failure was
// recorded with. A failure with no code of its own (an agent that failed, or one recorded before codes were) is
// AGENT_FAILED.
func failureError(text, code string) *gqlerror.Error {
	ext := ExtensionCode(&errs.Error{Code: errs.Code(code)})
	if code == "" || errs.Code(code) == errs.Internal || ext == "" {
		ext = "AGENT_FAILED"
	}
	return &gqlerror.Error{Message: text, Extensions: map[string]any{"code": ext}}
}

// maxContentType bounds an embed's content type (bytes).
const maxContentType = 255

// checkMessageInput checks the IDs a message names and bounds its embeds before anything is looked up; the
// command checks the rest (text, embed keys and sources).
func checkMessageInput(in generated.MessageInput) error {
	if err := ids.Check("session", ids.Session, in.Session); err != nil {
		return err
	}
	// inReplyTo, when given, names a message: a blank one is refused, not read as absent.
	if in.InReplyTo != nil {
		id := strings.TrimSpace(*in.InReplyTo)
		if id == "" {
			return errs.InvalidField("inReplyTo", "inReplyTo is blank: give the ID of the message this one answers (msg_...), or leave it out")
		}
		if err := ids.Check("inReplyTo", ids.Message, id); err != nil {
			return err
		}
	}
	if len(in.Embeds) > commands.MaxMessageEmbeds {
		return errs.InvalidField("embeds", "a message carries at most %d embeds", commands.MaxMessageEmbeds)
	}
	for i, e := range in.Embeds {
		at := fmt.Sprintf("embeds[%d]", i)
		if e.EmbedID != nil && strings.TrimSpace(*e.EmbedID) != "" {
			if err := ids.Check(at+".embedId", ids.Embed, strings.TrimSpace(*e.EmbedID)); err != nil {
				return err
			}
		}
		if e.ContentType != nil && len(*e.ContentType) > maxContentType {
			return errs.InvalidField(at+".contentType", "a content type has at most %d bytes", maxContentType)
		}
	}
	return nil
}

// awaitReply waits for the query's answer (a reply or a failure), or until the wait is over (nil, no error: the
// caller returns what exists). A failure comes back as the error entry it makes too. It listens on the answer's subjects before it looks in the log, so an answer
// appended in between is seen either way; no consumer is made for it.
func (r *Resolver) awaitReply(ctx context.Context, sessionID, queryID string, after uint64, timeout time.Duration) (*model.Message, *gqlerror.Error, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answers := make(chan *nats.Msg, 8)
	var subs []*nats.Subscription
	defer func() {
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	}()
	for _, name := range []string{"reply_posted", "reply_failed"} {
		sub, err := r.d.NC.ChanSubscribe(r.d.Names.EventSubject("session", sessionID, name), answers)
		if err != nil {
			return nil, nil, fmt.Errorf("await the reply to %s: %w", queryID, err)
		}
		subs = append(subs, sub)
	}
	natsx.Registered(wctx, r.d.NC)
	find := func(atLeast uint64) (session.Message, bool, error) {
		var found session.Message
		ok := false
		err := r.d.Sessions.Repo().Read(wctx, sessionID, atLeast, func(s *session.State, _ events.Version) error {
			for _, m := range s.Messages {
				if m.InReplyTo == queryID && m.Type != events.MessageQuery {
					found, ok = m, true
				}
			}
			return nil
		})
		return found, ok, err
	}
	m, ok, err := find(after)
	for err == nil && !ok {
		select {
		case msg := <-answers:
			env, derr := r.d.Store.DecodeEnvelope(msg.Data)
			if derr != nil {
				continue
			}
			cm, isMsg := session.ChatMessage(env)
			if !isMsg || cm.InReplyTo != queryID {
				continue
			}
			// Read it back to learn its sequence; a replica that has not applied it yet leaves the published one.
			if m, ok, err = find(eventstore.Fresh); err == nil && !ok {
				m, ok = cm, true
			}
		case <-time.After(time.Second):
			// A reconnect may have lost a published answer: the log has it.
			m, ok, err = find(eventstore.Fresh)
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if m, ok, err = find(eventstore.Fresh); err != nil || !ok {
				return nil, nil, nil
			}
		}
	}
	if err != nil {
		if wctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	// The client may read the session next: let the read model show the reply first (briefly; it is there soon
	// anyway).
	if m.Seq > 0 {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		if err := r.d.Views.WaitFor(rctx, "sessions", m.Seq); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			rcancel()
			return nil, nil, err
		}
		rcancel()
	}
	mm, err := r.messageModel(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	if m.Type == events.MessageError {
		return &mm, failureError(m.Text, m.Code), nil
	}
	return &mm, nil, nil
}

// selectsOnly reports whether the client asked for nothing of the field being resolved, of GraphQL type typ,
// but the named subfields. Fragments on typ count: their fields are collected with the rest.
func selectsOnly(ctx context.Context, typ string, names ...string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{typ}) {
		if !slices.Contains(names, f.Name) {
			return false
		}
	}
	return true
}
