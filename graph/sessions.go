package graph

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/graph/model"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
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
	v, err := r.session(ctx, handle)
	if err != nil {
		return nil, err
	}
	s := sessionModel(v)
	return &s, nil
}

func (r *Resolver) session(ctx context.Context, handle string) (projections.SessionView, error) {
	p, err := principal(ctx)
	if err != nil {
		return projections.SessionView{}, err
	}
	v, ok, err := projections.Get[projections.SessionView](ctx, r.d.Views, "sessions", projections.SessionKey(p.AccountID, handle))
	if err != nil {
		return projections.SessionView{}, err
	}
	if !ok {
		return projections.SessionView{}, errs.NotFoundf("session", handle)
	}
	return v, nil
}

// Messages is the session's chat log, oldest first.
func (r sessionResolver) Messages(ctx context.Context, obj *generated.Session, first *int, after *string) ([]model.Message, error) {
	v, err := r.session(ctx, obj.Handle)
	if err != nil {
		return nil, err
	}
	views, err := projections.ListAll[projections.MessageView](ctx, r.d.Views, "sessions", projections.SessionMessagesFilter(v.Account, v.ID))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]projections.MessageView, len(views))
	for _, m := range views {
		byID[m.ID] = m
	}
	out := make([]model.Message, 0, len(v.MessageIDs))
	for _, id := range v.MessageIDs {
		m, ok := byID[id]
		if !ok {
			continue
		}
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
			if v, ok, err := projections.Get[projections.EmbedView](ctx, r.d.Views, "embeds", projections.EmbedKey(account, em.EmbedID)); err == nil && ok {
				created := v.Created
				entry.Embed.Size, entry.Embed.Created = int(v.Size), &created
			}
		}
		out = append(out, entry)
	}
	return out, nil
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
	v, ok, err := projections.Get[projections.MessageView](ctx, r.d.Views, "sessions", projections.SessionMessageKey(p.AccountID, obj.SessionID, obj.InReplyToID))
	if err != nil {
		return nil, err
	}
	if !ok {
		// Not in the read model yet (a message fresh from a subscription): its ID is what there is.
		return &model.Message{ID: obj.InReplyToID, SessionID: obj.SessionID, Embeds: []model.EmbedEntry{}}, nil
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

// CreateSession opens a session answered by the given agent (default fixie).
func (r mutationResolver) CreateSession(ctx context.Context, in *generated.SessionInput) (*generated.SessionPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var ns commands.NewSession
	if in != nil {
		ns = commands.NewSession{FrontendAgent: trimmed(in.FrontendAgentID), Name: trimmed(in.Name), Description: trimmed(in.Description)}
	}
	s, err := r.d.Commands.CreateSession(ctx, p, ns)
	if err != nil {
		return nil, err
	}
	v, err := r.session(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	m := sessionModel(v)
	return &generated.SessionPayload{Session: &m}, nil
}

// DeleteSession closes a session of the caller's.
func (r mutationResolver) DeleteSession(ctx context.Context, handle string) (*generated.SessionPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	v, err := r.session(ctx, handle)
	if err != nil {
		return nil, err
	}
	if err := r.d.Commands.DeleteSession(ctx, p, handle); err != nil {
		return nil, err
	}
	m := sessionModel(v)
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
	nm := commands.NewSessionMessage{Session: in.Session, Text: in.Text, InReplyTo: trimmed(in.InReplyTo)}
	if len(in.Embeds) > 0 {
		nm.Embeds = make(map[string]commands.EmbedSource, len(in.Embeds))
		for i, e := range in.Embeds {
			if _, dup := nm.Embeds[e.Key]; dup {
				return nil, errs.InvalidField("embeds", "embeds[%d]: key %q is given twice", i, e.Key)
			}
			nm.Embeds[e.Key] = commands.EmbedSource{EmbedID: trimmed(e.EmbedID), URI: trimmed(e.URI), ContentType: trimmed(e.ContentType)}
		}
	}
	posted, err := r.d.Commands.PostMessage(ctx, p, nm)
	if err != nil {
		return nil, err
	}
	msg, err := r.postedModel(ctx, posted)
	if err != nil {
		return nil, err
	}
	out := &generated.MessagePayload{Message: &msg}
	if wait == nil || !*wait {
		return out, nil
	}
	reply, failure, err := r.awaitReply(ctx, posted.Session, posted.Message.ID, posted.Seq, timeout)
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

func (r *Resolver) postedModel(ctx context.Context, pm commands.PostedMessage) (model.Message, error) {
	m := pm.Message
	return r.messageModel(ctx, projections.MessageView{ID: m.ID, SessionID: pm.Session, Text: m.Text, Embeds: m.Embeds,
		SentBy: m.SentBy, Type: m.Type, InReplyTo: m.InReplyTo, Time: m.Time})
}

// awaitReply follows the session's log after the query until its answer (a reply or a failure) is appended, or the
// wait is over (nil, no error: the caller returns what exists). A failure comes back as the error entry it makes too.
func (r *Resolver) awaitReply(ctx context.Context, session, queryID string, after uint64, timeout time.Duration) (*model.Message, *gqlerror.Error, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for e, err := range r.d.Store.Follow(wctx, after+1, r.d.Names.AggregateFilter("session", session)) {
		if err != nil {
			if wctx.Err() != nil {
				break
			}
			return nil, nil, err
		}
		m, ok := eventMessage(e)
		if !ok || m.InReplyTo != queryID || m.Type == events.MessageQuery {
			continue
		}
		// The client may read the session next: let the read model show the reply first (briefly; it is there
		// soon anyway).
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		if err := r.d.Views.WaitFor(rctx, "sessions", e.Sequence); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			rcancel()
			return nil, nil, err
		}
		rcancel()
		mm, err := r.messageModel(ctx, m)
		if err != nil {
			return nil, nil, err
		}
		if f, ok := e.Event.(events.SessionReplyFailed); ok {
			return &mm, failureError(f.Error, f.Code), nil
		}
		return &mm, nil, nil
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	return nil, nil, nil
}

// eventMessage is the message an event creates, if it creates one.
func eventMessage(e events.Envelope) (projections.MessageView, bool) {
	m := projections.MessageView{SessionID: e.AggregateID, Time: e.Time, Seq: e.Sequence}
	switch d := e.Event.(type) {
	case events.SessionMessagePosted:
		m.ID, m.Text, m.Embeds, m.SentBy, m.Type, m.InReplyTo = d.MessageID, d.Text, d.Embeds, d.SentBy, d.Type, d.InReplyTo
	case events.SessionReplyPosted:
		m.ID, m.Text, m.Embeds, m.SentBy, m.Type, m.InReplyTo = d.MessageID, d.Text, d.Embeds, d.SentBy, events.MessageResponse, d.InReplyTo
	case events.SessionReplyFailed:
		m.ID, m.Text, m.SentBy, m.Type, m.InReplyTo = d.MessageID, d.Error, d.SentBy, events.MessageError, d.InReplyTo
	default:
		return m, false
	}
	return m, true
}
