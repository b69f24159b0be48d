// Package session is the session aggregate: a chat between an account and agents. It holds the session's state
// and the one fold of its events (State.Apply), the decisions made on it — by commands (create, post a message,
// delete) and by the handlers that answer queries (dispatch a query to an agent, record an agent's steps, delegate
// to another agent, answer) — and the one mapping from its events to the chat messages every face shows
// (ChatMessage) and to the lines replay prints (Describe).
//
// A query is answered along paths: the session's front agent answers it at the top path ("fixie"); an agent that
// asks another opens a child path ("fixie>calc"). Every hop is an event of the session: query_dispatched opens a
// path (a query posted to an idle session carries its top path's dispatch itself: DispatchOf), agent_step records what its agent did (a model line, a func call and its result, another agent's answer),
// routed is the router's answer, and reply_posted (or reply_failed) ends the query. So a query resumes after a crash
// from its last recorded step, on any node, and replay shows every hop.
//
// It imports events and errs only.
package session

import (
	"maps"
	"strings"
	"time"

	"github.com/contrailhq/contrail/events"
)

// Aggregate is the aggregate type of sessions in the log.
const Aggregate = "session"

// State is a session rebuilt from its events.
type State struct {
	ID          string
	Account     string
	Exists      bool
	Deleted     bool
	Name        string
	Description string
	// FrontAgentID and FrontAgentHandle name the agent that answers the session's queries.
	FrontAgentID     string
	FrontAgentHandle string
	Created          time.Time
	Modified         time.Time
	// Messages is the chat log in order: queries, replies and failures.
	Messages []Message
	// Queries are the session's queries in the order they were posted, with the work on each.
	Queries []*Query
	// Julep is set on a Julep session (julep.go): its agents, users and settings, its chat turns and history.
	Julep *Julep

	byMessage map[string]int // message ID -> index in Messages
	byQuery   map[string]int // query message ID -> index in Queries
	byReply   map[string]int // reply ID -> index in Queries
}

// Query is one user query and the work on it.
type Query struct {
	MessageID string
	// EventID is the ID of the event that posted the query: every reaction derives its ID from it, so that a
	// reaction delivered twice is appended once.
	EventID string
	Text    string
	Embeds  map[string]events.MessageEmbed
	ReplyID string
	// Dispatched says the query went to the front agent; Answered that it has a reply or a failure.
	Dispatched bool
	Answered   bool
	// Paths are the agents working on the query, by path name.
	Paths map[string]*Path
}

// Path is one agent's work on a query: the front agent's at the top, a delegate's below it.
type Path struct {
	// Name is the path: the front agent's handle at the top, then ">handle" per delegation ("fixie>calc").
	Name string
	// Dispatch is what opened it: which agent, of which kind, asked what.
	Dispatch events.SessionQueryDispatched
	// DispatchID is the ID of the dispatch event; the path's steps derive their IDs from it.
	DispatchID string
	// Steps are what the agent did, in order (Steps[i].Index == i).
	Steps []events.SessionAgentStep
	// Routed is the router's answer, on a router's path.
	Routed *events.SessionRouted
}

// Depth is how many delegations deep the path is (0 at the top).
func (p *Path) Depth() int { return strings.Count(p.Name, ">") }

// Parent is the name of the path that opened this one ("" at the top).
func (p *Path) Parent() string {
	if i := strings.LastIndexByte(p.Name, '>'); i >= 0 {
		return p.Name[:i]
	}
	return ""
}

// Handles lists the agents from the top down to this path's, for loop checks.
func (p *Path) Handles() []string {
	parts := strings.Split(p.Name, ">")
	for i, h := range parts {
		if j := strings.IndexByte(h, '#'); j >= 0 {
			parts[i] = h[:j]
		}
	}
	return parts
}

// Last is the path's last step (zero when it has none).
func (p *Path) Last() events.SessionAgentStep {
	if len(p.Steps) == 0 {
		return events.SessionAgentStep{}
	}
	return p.Steps[len(p.Steps)-1]
}

// Answered reports whether the path's agent has answered (or failed), and with what.
func (p *Path) Answered() (Outcome, bool) {
	if p.Routed != nil {
		text := p.Routed.Chosen
		if text == "" {
			text = "none"
		}
		return Outcome{Text: text}, true
	}
	switch last := p.Last(); last.Kind {
	case StepAnswer:
		return Outcome{Text: last.Text, Embeds: p.Embeds()}, true
	case StepFailed:
		return Outcome{Failed: true, Text: last.Text, Code: last.Code}, true
	}
	return Outcome{}, false
}

// Embeds are what the path's steps came back with (a func's chart, another agent's image) and what steps still to
// be recorded carry, by key, later ones over earlier: what the path's answer refers to as #key goes with it.
func (p *Path) Embeds(more ...events.SessionAgentStep) map[string]events.MessageEmbed {
	var out map[string]events.MessageEmbed
	for _, steps := range [][]events.SessionAgentStep{p.Steps, more} {
		for _, st := range steps {
			for k, em := range st.Embeds {
				if out == nil {
					out = map[string]events.MessageEmbed{}
				}
				out[k] = em
			}
		}
	}
	return out
}

// Outcome is how a path ended: an answer, or a failure the user can read (and its kind, in internal/errs's
// words, when it is known).
type Outcome struct {
	Failed bool
	Text   string
	Code   string
	Embeds map[string]events.MessageEmbed
}

// Steps kinds: what an agent_step records.
const (
	StepThought   = "thought"    // a free line of the model's ("Thought: ...")
	StepAskFunc   = "ask_func"   // the model asked for a func call: Name, Text = the input
	StepFuncSays  = "func_says"  // the func's answer: Name, Text (and Embeds)
	StepAskAgent  = "ask_agent"  // the model asked another agent: Name, Text = the query
	StepAgentSays = "agent_says" // the other agent's answer
	StepAnswer    = "answer"     // the agent's answer: Text (and Embeds)
	StepFailed    = "failed"     // the agent could not answer: Text says why, for the user
)

// Message finds a chat message by ID.
func (s *State) Message(id string) (Message, bool) {
	i, ok := s.byMessage[id]
	if !ok {
		return Message{}, false
	}
	return s.Messages[i], true
}

// Query finds a query by its message ID.
func (s *State) Query(messageID string) (*Query, bool) {
	i, ok := s.byQuery[messageID]
	if !ok {
		return nil, false
	}
	return s.Queries[i], true
}

// QueryByReply finds a query by the ID its reply has (or will have).
func (s *State) QueryByReply(replyID string) (*Query, bool) {
	i, ok := s.byReply[replyID]
	if !ok {
		return nil, false
	}
	return s.Queries[i], true
}

// Path finds a path of a query.
func (s *State) Path(replyID, path string) (*Query, *Path, bool) {
	q, ok := s.QueryByReply(replyID)
	if !ok {
		return nil, nil, false
	}
	p, ok := q.Paths[path]
	return q, p, ok
}

// Owned reports whether the session exists, is not deleted and belongs to account.
func (s *State) Owned(account string) bool {
	return s.Exists && !s.Deleted && s.Account == account
}

// Apply folds one event: the only fold of session events.
func (s *State) Apply(e events.Envelope) {
	if m, ok := ChatMessage(e); ok && s.Exists {
		s.byMessage[m.ID] = len(s.Messages)
		s.Messages = append(s.Messages, m)
		s.Modified = e.Time
	}
	switch d := e.Event.(type) {
	case events.SessionCreated:
		s.ID, s.Account, s.Exists = e.AggregateID, e.Account, true
		s.Name, s.Description = d.Name, d.Description
		s.FrontAgentID, s.FrontAgentHandle = d.FrontendAgentID, d.FrontendAgentHandle
		s.Created, s.Modified = e.Time, e.Time
		s.byMessage, s.byQuery, s.byReply = map[string]int{}, map[string]int{}, map[string]int{}
		if d.Julep != nil {
			s.Julep = newJulep(*d.Julep)
		}
	case events.SessionMessagePosted:
		if !s.Exists || d.Type != events.MessageQuery {
			return
		}
		q := &Query{MessageID: d.MessageID, EventID: e.ID, Text: d.Text, Embeds: d.Embeds, ReplyID: ReplyID(e.ID),
			Paths: map[string]*Path{}}
		s.byQuery[q.MessageID] = len(s.Queries)
		s.byReply[q.ReplyID] = len(s.Queries)
		s.Queries = append(s.Queries, q)
		if dispatch, ok := DispatchOf(e); ok {
			s.dispatch(dispatch, topDispatchID(e.ID))
		}
	case events.SessionQueryDispatched:
		s.dispatch(d, e.ID)
	case events.SessionAgentStep:
		q, ok := s.QueryByReply(d.ReplyID)
		if !ok {
			return
		}
		name := d.Path
		if name == "" {
			name = d.Agent
		}
		p, ok := q.Paths[name]
		if !ok {
			// Steps recorded before paths were dispatched as events: the path exists by its steps.
			p = &Path{Name: name, Dispatch: events.SessionQueryDispatched{ReplyID: d.ReplyID, AgentHandle: d.Agent, Path: name}}
			q.Paths[name] = p
		}
		if d.Index == len(p.Steps) {
			p.Steps = append(p.Steps, d)
		}
	case events.SessionRouted:
		if _, p, ok := s.Path(d.ReplyID, d.Path); ok && p.Routed == nil {
			routed := d
			p.Routed = &routed
		}
	case events.SessionReplyPosted:
		if q, ok := s.Query(d.InReplyTo); ok {
			q.Answered = true
		}
	case events.SessionReplyFailed:
		if q, ok := s.Query(d.InReplyTo); ok {
			q.Answered = true
		}
	case events.SessionDeleted:
		s.Deleted = true
		s.Modified = e.Time
	default:
		s.applyJulep(e)
	}
}

// dispatch opens the path a dispatch names; id is the dispatch's ID, from which the path's steps derive theirs.
func (s *State) dispatch(d events.SessionQueryDispatched, id string) {
	q, ok := s.QueryByReply(d.ReplyID)
	if !ok {
		return
	}
	name := d.Path
	if name == "" {
		name = d.AgentHandle // a dispatch from before paths were recorded: the top
	}
	if _, exists := q.Paths[name]; exists {
		return
	}
	if !strings.Contains(name, ">") {
		q.Dispatched = true
	}
	q.Paths[name] = &Path{Name: name, Dispatch: d, DispatchID: id}
}

// DispatchOf is the dispatch an event makes: a session.query_dispatched's own, or the one a query posted to an idle
// session carries, with the query's message and reply IDs filled in.
func DispatchOf(e events.Envelope) (events.SessionQueryDispatched, bool) {
	switch d := e.Event.(type) {
	case events.SessionQueryDispatched:
		return d, true
	case events.SessionMessagePosted:
		if d.Dispatch == nil || d.Type != events.MessageQuery {
			return events.SessionQueryDispatched{}, false
		}
		out := *d.Dispatch
		out.MessageID, out.ReplyID = d.MessageID, ReplyID(e.ID)
		return out, true
	}
	return events.SessionQueryDispatched{}, false
}

// topDispatchID is the ID of a query's dispatch to its front agent, derived from the ID of the event that posted
// it: a query_dispatched appended for it has it (Dispatch), and a dispatch that went with the post is folded with
// it, so the steps on the top path derive the same IDs either way.
func topDispatchID(postID string) string { return events.DeriveID(postID, "dispatch") }

// ReplyID is the ID the reply to a query will have: derived from the event that posted the query, so that answering
// it twice cannot make two replies.
func ReplyID(queryEventID string) string { return "msg_" + events.DeriveID(queryEventID, "reply") }

// Context is the chat log a query is answered in: every message as it is now — the replies to earlier queries
// included, though they were appended after this query was posted — without the query itself and any query posted
// after it; and the query as a message.
func (s *State) Context(q *Query) (history []Message, query Message) {
	at, ok := s.byMessage[q.MessageID]
	if !ok {
		at = len(s.Messages)
	} else {
		query = s.Messages[at]
	}
	// Every message before the query, then the answers after it: one copy, sized once (a long session's log is
	// copied on every step of its queries).
	history = make([]Message, 0, len(s.Messages))
	history = append(history, s.Messages[:at]...)
	for _, m := range s.Messages[min(at+1, len(s.Messages)):] {
		if m.Type != events.MessageQuery {
			history = append(history, m)
		}
	}
	return history, query
}

// AnsweredCount is how many of the session's queries have a reply or a failure.
func (s *State) AnsweredCount() int {
	n := 0
	for _, q := range s.Queries {
		if q.Answered {
			n++
		}
	}
	return n
}

// Clone copies the state so that the fold's later changes do not reach the copy (eventstore.Repo.Get hands out
// copies). Messages and steps are values that never change once appended; queries and paths are copied.
func (s *State) Clone() State {
	out := *s
	out.Messages = append([]Message(nil), s.Messages...)
	out.byMessage = maps.Clone(s.byMessage)
	out.byQuery = maps.Clone(s.byQuery)
	out.byReply = maps.Clone(s.byReply)
	out.Queries = make([]*Query, len(s.Queries))
	for i, q := range s.Queries {
		qc := *q
		qc.Paths = make(map[string]*Path, len(q.Paths))
		for name, p := range q.Paths {
			pc := *p
			pc.Steps = append([]events.SessionAgentStep(nil), p.Steps...)
			qc.Paths[name] = &pc
		}
		out.Queries[i] = &qc
	}
	if s.Julep != nil {
		out.Julep = s.Julep.Clone()
	}
	return out
}
