package graph

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/graph/model"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/natsx"
)

// SessionMessages streams the session's new messages from the log, and the token deltas of replies from the
// session's live subject. A delta that arrives after its reply's message is dropped: the message holds it.
func (r subscriptionResolver) SessionMessages(ctx context.Context, handle string) (<-chan *generated.SessionUpdate, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	// The handle becomes part of the live subject: a wildcard would listen to every session's replies, and a long
	// one would make the server close the node's connection.
	if err := ids.Check("handle", ids.Session, handle); err != nil {
		return nil, err
	}
	// Listen for deltas before reading where the log ends, so that none of a reply already streaming is missed
	// for want of a subscription.
	deltas := make(chan *nats.Msg, 256)
	sub, err := r.d.NC.ChanSubscribe(r.d.Names.LiveSubject("session", handle), deltas)
	if err != nil {
		return nil, err
	}
	natsx.Registered(ctx, r.d.NC)
	// Watched before the read too: every event after the read's version is then in the watch.
	watch, err := r.d.Store.Watch(ctx, events.Ref{Type: "session", ID: handle})
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	state, v, err := r.d.Sessions.Get(ctx, p, handle)
	if err != nil {
		watch.Close()
		_ = sub.Unsubscribe()
		return nil, err
	}
	// Deltas come at once; the log's events a moment later. A reply's deltas wait until the query they answer has
	// been sent from the log (queries from before the subscription were shown already), so a client never sees a
	// reply start before its question.
	shown := make(map[string]bool, len(state.Messages))
	for _, m := range state.Messages {
		shown[m.ID] = true
	}
	logEvents := follow(ctx, watch, watch.Follow(ctx, v))
	out := make(chan *generated.SessionUpdate, 16)
	st := &sessionStream{out: out, shown: shown, done: map[string]bool{}, held: map[string][]agents.LiveDelta{}}
	go func() {
		defer close(out)
		defer func() { _ = sub.Unsubscribe() }()
		r.streamSession(ctx, handle, st, int(v.Seq), deltas, logEvents)
	}()
	return out, nil
}

// streamSession sends a subscription's updates until ctx ends, the log cannot be followed or the session is deleted:
// "ready" with the sequence it starts after, then the log's messages and the deltas between them.
func (r subscriptionResolver) streamSession(ctx context.Context, handle string, st *sessionStream, ready int, deltas <-chan *nats.Msg, logEvents <-chan followed) {
	if !st.send(ctx, &generated.SessionUpdate{Kind: "ready", Sequence: &ready}) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-deltas:
			if !st.delta(ctx, m) {
				return
			}
		case fe, ok := <-logEvents:
			if !ok {
				return
			}
			if fe.err != nil {
				r.d.Logger.Warn("sessionMessages: follow the log", "session", handle, "err", fe.err)
				return
			}
			if _, deleted := fe.env.Event.(events.SessionDeleted); deleted {
				return
			}
			mv, ok := session.ChatMessage(fe.env)
			if !ok {
				continue
			}
			// The runner published the reply's deltas before it appended the reply, on one connection, so
			// they are here by now: pass them on first, so that the message comes after its last delta.
			for drained := false; !drained; {
				select {
				case m := <-deltas:
					if !st.delta(ctx, m) {
						return
					}
				default:
					drained = true
				}
			}
			m, err := r.messageModel(ctx, mv)
			if err != nil {
				r.d.Logger.Warn("sessionMessages: show message", "session", handle, "err", err)
				return
			}
			if !st.message(ctx, mv.ID, int(fe.env.Sequence), &m) {
				return
			}
		}
	}
}

// sessionStream is what one sessionMessages subscription has sent, and the deltas it holds back.
type sessionStream struct {
	out   chan<- *generated.SessionUpdate
	shown map[string]bool // messages sent, or shown before the subscription
	done  map[string]bool // replies whose message was sent
	// held are deltas of replies to queries not sent yet, by query: a client never sees a reply start before its
	// question.
	held      map[string][]agents.LiveDelta
	heldCount int
}

func (st *sessionStream) send(ctx context.Context, u *generated.SessionUpdate) bool {
	select {
	case st.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// delta passes on, holds or drops a delta from the session's live subject. It reports false when the
// subscription has ended.
func (st *sessionStream) delta(ctx context.Context, m *nats.Msg) bool {
	var d agents.LiveDelta
	if json.Unmarshal(m.Data, &d) != nil || d.Type != "delta" || st.done[d.MessageID] {
		return true
	}
	if !st.shown[d.InReplyTo] {
		if st.heldCount < maxHeldDeltas {
			st.held[d.InReplyTo] = append(st.held[d.InReplyTo], d)
			st.heldCount++
		}
		return true
	}
	return st.passDelta(ctx, d)
}

func (st *sessionStream) passDelta(ctx context.Context, d agents.LiveDelta) bool {
	if st.done[d.MessageID] {
		return true
	}
	return st.send(ctx, &generated.SessionUpdate{Kind: "delta", Delta: &generated.MessageDelta{MessageID: d.MessageID,
		InReplyTo: d.InReplyTo, Index: d.Index, Text: d.Text}})
}

// message sends a message from the log, then the deltas held for replies to it.
func (st *sessionStream) message(ctx context.Context, id string, seq int, m *model.Message) bool {
	st.done[id] = true
	st.shown[id] = true
	if !st.send(ctx, &generated.SessionUpdate{Kind: "message", Sequence: &seq, Message: m}) {
		return false
	}
	for _, d := range st.held[id] {
		if !st.passDelta(ctx, d) {
			return false
		}
	}
	st.heldCount -= len(st.held[id])
	delete(st.held, id)
	return true
}

// maxHeldDeltas bounds the deltas a subscription holds for replies to queries it has not sent yet.
const maxHeldDeltas = 4096

// SessionEvents streams the session's raw events from a stream sequence (0 = the beginning), history then live,
// with no gap or duplicate at the switch.
func (r subscriptionResolver) SessionEvents(ctx context.Context, handle string, fromSequence *int) (<-chan *generated.SessionEvent, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	from := 0
	if fromSequence != nil {
		from = *fromSequence
	}
	if from < 0 {
		return nil, errs.InvalidField("fromSequence", "fromSequence must not be negative")
	}
	if err := ids.Check("handle", ids.Session, handle); err != nil {
		return nil, err
	}
	if _, _, err := r.d.Sessions.Get(ctx, p, handle); err != nil {
		return nil, err
	}
	watch, err := r.d.Store.Watch(ctx, events.Ref{Type: "session", ID: handle})
	if err != nil {
		return nil, err
	}
	logEvents := follow(ctx, watch, watch.FollowFrom(ctx, uint64(from)))
	out := make(chan *generated.SessionEvent, 16)
	go func() {
		defer close(out)
		for fe := range logEvents {
			if fe.err != nil {
				r.d.Logger.Warn("sessionEvents: follow the log", "session", handle, "err", fe.err)
				return
			}
			e := fe.env
			data := map[string]any{}
			if err := json.Unmarshal(e.Data, &data); err != nil {
				r.d.Logger.Warn("sessionEvents: decode event data", "seq", e.Sequence, "err", err)
			}
			select {
			case out <- &generated.SessionEvent{Sequence: int(e.Sequence), ID: e.ID, Type: e.Type, Time: e.Time,
				Version: int(e.Version), Actor: optional(e.Actor), CorrelationID: optional(e.CorrelationID),
				CausationID: optional(e.CausationID), Data: data}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

type followed struct {
	env events.Envelope
	err error
}

// follow runs a follower of one session's events in a goroutine, handing them to a channel until ctx ends; the
// session's watch ends with it.
func follow(ctx context.Context, watch *eventstore.Watch, log iter.Seq2[events.Envelope, error]) <-chan followed {
	ch := make(chan followed)
	go func() {
		defer close(ch)
		defer watch.Close()
		for e, err := range log {
			select {
			case ch <- followed{env: e, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}
