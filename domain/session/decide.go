package session

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Create opens a session with the given front agent.
func Create(s *State, id string, in events.SessionCreated) ([]events.Event, error) {
	if s.Exists {
		return nil, errs.E(errs.Conflict, "session %s exists", id)
	}
	return []events.Event{in}, nil
}

// Post adds a user's message (a query) to a session of the account. A query that has no unanswered query before it
// goes to front in the same event (see events.SessionMessagePosted.Dispatch): the session runner has nothing to do
// for it, and a query costs one event and one handler's delivery less. With front nil (the front agent cannot be
// used, or is not known here), the session runner dispatches it or records why it cannot.
func Post(s *State, account string, m events.SessionMessagePosted, front *Target) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("session", s.ID)
	}
	if s.Julep != nil {
		return nil, errs.E(errs.Invalid, "session %s is a Julep session: chat with it at /julep/sessions/%s/chat", s.ID, s.ID)
	}
	if m.InReplyTo != "" {
		if _, ok := s.Message(m.InReplyTo); !ok {
			return nil, errs.InvalidField("inReplyTo", "session %s has no message %q", s.ID, m.InReplyTo)
		}
	}
	m.Dispatch = nil
	if front != nil && m.Type == events.MessageQuery && s.Idle() {
		m.Dispatch = &events.SessionQueryDispatched{AgentID: front.ID, AgentHandle: front.Handle, Path: front.Handle,
			Kind: front.Kind, AgentSeq: front.Seq}
	}
	return []events.Event{m}, nil
}

// Idle reports that every query of the session is answered: one posted now is the next to go.
func (s *State) Idle() bool {
	for _, q := range s.Queries {
		if !q.Answered {
			return false
		}
	}
	return true
}

// Delete closes a session of the account: its messages are no longer readable and nothing more is answered.
func Delete(s *State, account, id string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("session", id)
	}
	return []events.Event{events.SessionDeleted{}}, nil
}

// Next is the query whose turn has come and that no agent has been given yet. A session's queries are answered in
// order, one at a time, each with the replies before it as context: while one is in flight, Next is nil.
func (s *State) Next() *Query {
	if !s.Exists || s.Deleted || s.Julep != nil { // a Julep session's chats are the Julep chat handler's
		return nil
	}
	for _, q := range s.Queries {
		if q.Answered {
			continue
		}
		if q.Dispatched {
			return nil
		}
		return q
	}
	return nil
}

// Target is an agent a query goes to, and which handler works for it.
type Target struct {
	ID     string
	Handle string
	// Kind is the handler's kind ("front", "codeshot", "router", "standalone").
	Kind string
	// Seq is the stream sequence of the agent's last event (0 for a built-in).
	Seq uint64
}

// Path kinds: which handler works on a path.
const (
	KindFront      = "front"      // the built-in front agent on the offline model: route, then hand the query over
	KindCodeShot   = "codeshot"   // few-shots run by the platform's model (the front agent too, with a real model)
	KindRouter     = "router"     // the built-in router: the agents closest to the query
	KindStandalone = "standalone" // an HTTP agent that answers the query itself
)

// Dispatch hands a query to the session's front agent: it opens the query's top path.
func Dispatch(s *State, q *Query, t Target) []events.Event {
	if !s.Exists || s.Deleted || q.Dispatched || q.Answered {
		return nil
	}
	return []events.Event{events.WithID(topDispatchID(q.EventID), events.SessionQueryDispatched{
		MessageID: q.MessageID, ReplyID: q.ReplyID, AgentID: t.ID, AgentHandle: t.Handle, Path: t.Handle,
		Kind: t.Kind, AgentSeq: t.Seq})}
}

// Reply ends a query with its answer. A reply and a failure share their ID: a query ends once.
func Reply(s *State, q *Query, t Target, text string, embeds map[string]events.MessageEmbed) []events.Event {
	if !s.Exists || s.Deleted || q.Answered {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(q.EventID, "reply"), events.SessionReplyPosted{
		MessageID: q.ReplyID, InReplyTo: q.MessageID, Text: text, Embeds: embeds, SentBy: t.Handle, AgentID: t.ID})}
}

// Fail ends a query with a failure the user can read, so that no query is left hanging; code is its kind in
// internal/errs's words ("" when not known).
func Fail(s *State, q *Query, t Target, reason, code string) []events.Event {
	if !s.Exists || s.Deleted || q.Answered {
		return nil
	}
	sentBy := t.Handle
	if sentBy == "" {
		sentBy = "contrail"
	}
	return []events.Event{events.WithID(events.DeriveID(q.EventID, "reply"), events.SessionReplyFailed{
		MessageID: q.ReplyID, InReplyTo: q.MessageID, Error: reason, SentBy: sentBy, AgentID: t.ID, Code: code})}
}

// TextAt is what the agent at path p was asked.
func (q *Query) TextAt(p *Path) string {
	if p.Dispatch.Text != "" || p.Depth() > 0 {
		return p.Dispatch.Text
	}
	return q.Text
}

// Top is the query's top path (nil before it is dispatched).
func (q *Query) Top() *Path {
	for _, p := range q.Paths {
		if p.Depth() == 0 {
			return p
		}
	}
	return nil
}

// TargetOf is the agent working on a path.
func (p *Path) TargetOf() Target {
	return Target{ID: p.Dispatch.AgentID, Handle: p.Dispatch.AgentHandle, Kind: p.Dispatch.Kind, Seq: p.Dispatch.AgentSeq}
}

// Record appends steps to a path, numbered from `from`: the number of steps the caller saw when it worked out
// what they are. If the path has moved on since (another attempt recorded them), nothing is recorded: a step is
// recorded once, whoever works it out. Each step's ID derives from the path and its index.
func Record(s *State, q *Query, p *Path, from int, steps ...events.SessionAgentStep) []events.Event {
	if !s.Exists || s.Deleted || q.Answered || len(p.Steps) != from {
		return nil
	}
	if _, done := p.Answered(); done {
		return nil
	}
	out := make([]events.Event, 0, len(steps))
	for i, st := range steps {
		st.ReplyID, st.Path, st.Agent, st.Index = q.ReplyID, p.Name, p.Dispatch.AgentHandle, from+i
		out = append(out, events.WithID(events.DeriveID(p.DispatchID, "step:"+strconv.Itoa(st.Index)), st))
		if st.Kind == StepAnswer || st.Kind == StepFailed {
			break // nothing follows an answer
		}
	}
	return out
}

// ChildPath is the name of the path a delegation opens: the asking path, then the asked agent's handle, numbered
// when the same path asks the same agent again ("fixie>calc", "fixie>calc#2"). askIndex is the index of the asking
// step (an ask_agent step) in the asking path, or -1 for an agent that delegates without steps (the front agent).
func ChildPath(parent *Path, handle string, askIndex int) string {
	n := 1
	if askIndex >= 0 {
		n = 0
		for i := 0; i <= askIndex && i < len(parent.Steps); i++ {
			if st := parent.Steps[i]; st.Kind == StepAskAgent && st.Name == handle {
				n++
			}
		}
	}
	name := parent.Name + ">" + handle
	if n > 1 {
		name += "#" + strconv.Itoa(n)
	}
	return name
}

// CheckDelegation says whether the agent at path p may ask agent `handle`: not deeper than maxDepth, and not an
// agent already working on the query above it (no loops). The error is for the user to read.
func CheckDelegation(p *Path, handle string, maxDepth int) error {
	if len(p.Handles()) >= maxDepth {
		return fmt.Errorf("agents may delegate %d levels deep, and %s > %s is past that", maxDepth, strings.Join(p.Handles(), " > "), handle)
	}
	for _, h := range p.Handles() {
		if h == handle {
			return fmt.Errorf("agent %s is already answering this query (%s): no loops", handle, strings.Join(p.Handles(), ">"))
		}
	}
	return nil
}

// Delegate opens the child path `child` of path p: its agent asks t the text. Opening it again is nothing.
func Delegate(s *State, q *Query, p *Path, child string, t Target, text string) []events.Event {
	if !s.Exists || s.Deleted || q.Answered {
		return nil
	}
	if _, exists := q.Paths[child]; exists {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(p.DispatchID, "ask:"+child), events.SessionQueryDispatched{
		MessageID: q.MessageID, ReplyID: q.ReplyID, AgentID: t.ID, AgentHandle: t.Handle, Path: child, Kind: t.Kind,
		Text: text, AgentSeq: t.Seq})}
}

// Route records the router's answer on its path: the agents closest to the query, and the one chosen ("" = none
// fits).
func Route(s *State, q *Query, p *Path, matches []events.RouteMatch, chosen string) []events.Event {
	if !s.Exists || s.Deleted || q.Answered || p.Routed != nil {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(p.DispatchID, "routed"), events.SessionRouted{
		ReplyID: q.ReplyID, Path: p.Name, Query: q.TextAt(p), Matches: matches, Chosen: chosen})}
}

// Close ends a path with its outcome. At the top, the query gets its reply (or its failure). Below, the asking
// path records the answer as its next step — "Agent[x] says: ..." — or fails with it: an agent cannot go on without
// the answer it asked for. An asking path that did not ask by a step (the front agent) decides for itself.
func Close(s *State, q *Query, p *Path, o Outcome) []events.Event {
	if p.Depth() == 0 {
		t := p.TargetOf()
		if o.Failed {
			return Fail(s, q, t, o.Text, o.Code)
		}
		return Reply(s, q, t, o.Text, o.Embeds)
	}
	parent, ok := q.Paths[p.Parent()]
	if !ok {
		return nil
	}
	last := parent.Last()
	if last.Kind != StepAskAgent || ChildPath(parent, last.Name, last.Index) != p.Name {
		return nil // the parent is past this ask (recorded already), or never asked by a step
	}
	st := events.SessionAgentStep{Kind: StepAgentSays, Name: last.Name, Text: o.Text, Embeds: o.Embeds}
	if o.Failed {
		st = events.SessionAgentStep{Kind: StepFailed, Code: o.Code,
			Text: fmt.Sprintf("agent %s: asking agent %s failed: %s", parent.Dispatch.AgentHandle, last.Name, o.Text)}
	}
	return Record(s, q, parent, len(parent.Steps), st)
}
