package session

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// A Julep session is a session whose creation carries a Julep spec (its agents, users and settings). Its chats are
// turns: session.chat_requested records what was asked; the Julep chat handler answers each turn in steps, every
// one an event (prepared: the prompt rendered and the docs recalled; model_called and tool_ran while the model asks
// for tools the platform runs; answered or failed at the end). Turns run one at a time, in order, so each is
// answered with the history of those before it. A turn that is saved adds its messages to the session's history
// (Entries) when it is answered; a summary (session.summarized) stands in for the entries it covers.

// Julep is the Julep side of a session.
type Julep struct {
	Spec  events.JulepSessionSpec
	Turns []*Turn
	// Entries is the history: the saved turns' messages, in order.
	Entries []Entry
	// Summaries are the summaries made of the history, oldest first (each covers the first Upto entries).
	Summaries []events.SessionSummarized
	// SummaryFailed is the latest summary that could not be made, if any.
	SummaryFailed *events.SessionSummaryFailed
	byTurn        map[string]int
}

// Turn is one chat of a Julep session and the work on it.
type Turn struct {
	ID string
	// EventID is the ID of the chat_requested event: every step derives its event's ID from it.
	EventID  string
	Seq      uint64
	Time     time.Time
	Request  events.SessionChatRequested
	Prepared *events.SessionChatPrepared
	// Calls are the model calls that asked for tools the platform ran; Ran their results, call by call.
	Calls   []events.SessionChatModelCalled
	Ran     [][]events.SessionChatToolRan
	Answer  *events.SessionChatAnswered
	Failure *events.SessionChatFailed
	// EndSeq is the stream sequence of the answer or the failure.
	EndSeq uint64
	EndAt  time.Time
}

// Entry is a message of a Julep session's history.
type Entry struct {
	ID         string                 `json:"id"`
	Role       string                 `json:"role"`
	Name       string                 `json:"name,omitempty"`
	Content    string                 `json:"content"`
	ToolCalls  []events.JulepToolCall `json:"tool_calls,omitempty"`
	ToolCallID string                 `json:"tool_call_id,omitempty"`
	// Source is Julep's: api_request, api_response, tool_request, tool_response.
	Source string    `json:"source"`
	Model  string    `json:"model,omitempty"`
	Turn   string    `json:"turn"`
	Time   time.Time `json:"time"`
}

// Entry sources.
const (
	SourceRequest      = "api_request"
	SourceResponse     = "api_response"
	SourceToolRequest  = "tool_request"
	SourceToolResponse = "tool_response"
)

func newJulep(spec events.JulepSessionSpec) *Julep {
	return &Julep{Spec: spec, byTurn: map[string]int{}}
}

// Turn finds a turn by its ID.
func (j *Julep) Turn(id string) (*Turn, bool) {
	i, ok := j.byTurn[id]
	if !ok {
		return nil, false
	}
	return j.Turns[i], true
}

// Done reports whether the turn has ended (answered or failed).
func (t *Turn) Done() bool { return t.Answer != nil || t.Failure != nil }

// applyJulep folds the Julep events of a session (from State.Apply).
func (s *State) applyJulep(e events.Envelope) {
	j := s.Julep
	if j == nil {
		return
	}
	turn := func(id string) *Turn {
		t, _ := j.Turn(id)
		return t
	}
	switch d := e.Event.(type) {
	case events.SessionJulepUpdated:
		j.Spec = d.Spec
		s.Modified = e.Time
	case events.SessionChatRequested:
		if _, dup := j.byTurn[d.TurnID]; dup {
			return
		}
		j.byTurn[d.TurnID] = len(j.Turns)
		j.Turns = append(j.Turns, &Turn{ID: d.TurnID, EventID: e.ID, Seq: e.Sequence, Time: e.Time, Request: d})
		s.Modified = e.Time
	case events.SessionChatPrepared:
		if t := turn(d.TurnID); t != nil && t.Prepared == nil {
			p := d
			t.Prepared = &p
		}
	case events.SessionChatModelCalled:
		if t := turn(d.TurnID); t != nil && d.Call == len(t.Calls) {
			t.Calls = append(t.Calls, d)
			t.Ran = append(t.Ran, nil)
		}
	case events.SessionChatToolRan:
		if t := turn(d.TurnID); t != nil && d.Call == len(t.Calls)-1 && d.Index == len(t.Ran[d.Call]) {
			t.Ran[d.Call] = append(t.Ran[d.Call], d)
		}
	case events.SessionChatAnswered:
		if t := turn(d.TurnID); t != nil && !t.Done() {
			a := d
			t.Answer, t.EndSeq, t.EndAt = &a, e.Sequence, e.Time
			j.record(t, e.Time)
			s.Modified = e.Time
		}
	case events.SessionChatFailed:
		if t := turn(d.TurnID); t != nil && !t.Done() {
			f := d
			t.Failure, t.EndSeq, t.EndAt = &f, e.Sequence, e.Time
		}
	case events.SessionSummarized:
		if d.Upto > j.SummaryUpto() && d.Upto <= len(j.Entries) {
			j.Summaries = append(j.Summaries, d)
		}
	case events.SessionSummaryFailed:
		f := d
		j.SummaryFailed = &f
	}
}

// record adds a saved turn's messages to the history: what was asked, the tool calls the platform ran and their
// results, and the answer. A failed turn adds nothing, so a client that retries it does not find its question
// twice.
func (j *Julep) record(t *Turn, at time.Time) {
	if !t.Request.Save {
		return
	}
	model := t.Answer.Model
	add := func(m events.JulepMessage, source string) {
		j.Entries = append(j.Entries, Entry{ID: events.DeriveUUID(t.EventID, "entry:"+strconv.Itoa(len(j.Entries))),
			Role: m.Role, Name: m.Name, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID,
			Source: source, Model: model, Turn: t.ID, Time: at})
	}
	for _, m := range t.Input() {
		add(m, SourceRequest)
	}
	for i, c := range t.Calls {
		add(events.JulepMessage{Role: "assistant", Content: c.Text, ToolCalls: c.ToolCalls}, SourceToolRequest)
		for _, r := range t.Ran[i] {
			add(toolMessage(r), SourceToolResponse)
		}
	}
	add(events.JulepMessage{Role: "assistant", Content: t.Answer.Text, ToolCalls: t.Answer.ToolCalls}, SourceResponse)
}

// Input is what the turn asked: the messages as rendered when it was prepared, else as sent.
func (t *Turn) Input() []events.JulepMessage {
	if t.Prepared != nil {
		return t.Prepared.Input
	}
	return t.Request.Messages
}

func toolMessage(r events.SessionChatToolRan) events.JulepMessage {
	out := r.Output
	if r.Error != "" {
		out = "error: " + r.Error
	}
	return events.JulepMessage{Role: "tool", Content: out, ToolCallID: r.ToolCallID, Name: r.Name}
}

// SummaryUpto is how many of the history's first entries the latest summary covers (0: none).
func (j *Julep) SummaryUpto() int {
	if n := len(j.Summaries); n > 0 {
		return j.Summaries[n-1].Upto
	}
	return 0
}

// Summary is the summary that covers the first upto entries, if one was made.
func (j *Julep) Summary(upto int) (events.SessionSummarized, bool) {
	for _, s := range j.Summaries {
		if s.Upto == upto {
			return s, true
		}
	}
	return events.SessionSummarized{}, false
}

// Active is the turn the chat handler works on: the first that has not ended (nil when none waits). Turns are
// answered one at a time, in the order they were asked.
func (j *Julep) Active() *Turn {
	for _, t := range j.Turns {
		if !t.Done() {
			return t
		}
	}
	return nil
}

// StepKind is what a turn needs next.
type StepKind int

// The steps of a turn.
const (
	StepNone    StepKind = iota
	StepPrepare          // render the prompt and recall docs
	StepModel            // call the model (Call is the call's number)
	StepTool             // run tool call Index of model call Call
)

// TurnStep is a turn's next step.
type TurnStep struct {
	Kind  StepKind
	Call  int
	Index int
	// ToolCall is the call to run at a StepTool.
	ToolCall events.JulepToolCall
}

// Next is what the turn needs next.
func (t *Turn) Next() TurnStep {
	switch {
	case t.Done():
		return TurnStep{}
	case t.Prepared == nil:
		return TurnStep{Kind: StepPrepare}
	}
	if n := len(t.Calls); n > 0 {
		last := t.Calls[n-1]
		if ran := len(t.Ran[n-1]); ran < len(last.ToolCalls) {
			return TurnStep{Kind: StepTool, Call: n - 1, Index: ran, ToolCall: last.ToolCalls[ran]}
		}
	}
	return TurnStep{Kind: StepModel, Call: len(t.Calls)}
}

// OwnedJulep reports whether the session is a Julep session of account that is not deleted.
func (s *State) OwnedJulep(account string) bool { return s.Owned(account) && s.Julep != nil }

// CreateJulep opens a Julep session at id. Its ID derives from the request that creates it, so a session the
// account already has is that request again (a client's retry): nothing more is appended.
func CreateJulep(s *State, account, id string, spec events.JulepSessionSpec) ([]events.Event, error) {
	switch {
	case s.OwnedJulep(account):
		return nil, nil
	case s.Exists && !s.Deleted:
		return nil, errs.E(errs.Conflict, "the id %s is already in use by another session", id)
	}
	return []events.Event{events.SessionCreated{Julep: &spec}}, nil
}

// CreateOrUpdateJulep is POST /sessions/{id}: a new Julep session, or the caller's with spec in place of its own.
func CreateOrUpdateJulep(s *State, account, id string, spec events.JulepSessionSpec) ([]events.Event, error) {
	if s.OwnedJulep(account) {
		return []events.Event{events.SessionJulepUpdated{Spec: spec}}, nil
	}
	return CreateJulep(s, account, id, spec)
}

// ReplaceJulep gives the caller's Julep session a new spec (the whole spec after a PATCH or PUT); its agents and
// users stay.
func ReplaceJulep(s *State, account, id string, spec events.JulepSessionSpec) ([]events.Event, error) {
	if !s.OwnedJulep(account) {
		return nil, errs.NotFoundf("session", id)
	}
	spec.Agents, spec.Users = s.Julep.Spec.Agents, s.Julep.Spec.Users
	return []events.Event{events.SessionJulepUpdated{Spec: spec}}, nil
}

// DeleteJulep deletes the caller's Julep session (retry: the same client's delete again, which finds it deleted).
func DeleteJulep(s *State, account, id string, retry bool) ([]events.Event, error) {
	if retry && s.Exists && s.Deleted && s.Account == account && s.Julep != nil {
		return nil, nil
	}
	if !s.OwnedJulep(account) {
		return nil, errs.NotFoundf("session", id)
	}
	return []events.Event{events.SessionDeleted{}}, nil
}

// RequestChat asks the caller's Julep session a chat. The turn's ID derives from the request, so a turn the session
// already has is that request again: nothing more is appended, and the caller awaits the turn it has.
func RequestChat(s *State, account, id string, r events.SessionChatRequested) ([]events.Event, error) {
	if !s.OwnedJulep(account) {
		return nil, errs.NotFoundf("session", id)
	}
	if _, ok := s.Julep.Turn(r.TurnID); ok {
		return nil, nil
	}
	if !slices.Contains(s.Julep.Spec.Agents, r.Agent) {
		return nil, errs.InvalidField("agent", "agent %s is not an agent of session %s", r.Agent, id)
	}
	return []events.Event{r}, nil
}

// turnEvent gives a step of a turn its ID, derived from the turn's request and the step, so a step worked out twice
// is appended once.
func turnEvent(t *Turn, label string, ev events.Event) []events.Event {
	return []events.Event{events.WithID(events.DeriveID(t.EventID, label), ev)}
}

// Prepare records how the active turn's prompt was made.
func Prepare(s *State, t *Turn, p events.SessionChatPrepared) []events.Event {
	if !s.live() || t.Next().Kind != StepPrepare {
		return nil
	}
	p.TurnID = t.ID
	return turnEvent(t, "prepare", p)
}

// CallModel records a model call that asked for tools the platform runs next.
func CallModel(s *State, t *Turn, c events.SessionChatModelCalled) []events.Event {
	if next := t.Next(); !s.live() || next.Kind != StepModel || next.Call != c.Call {
		return nil
	}
	c.TurnID = t.ID
	return turnEvent(t, "call:"+strconv.Itoa(c.Call), c)
}

// RanTool records a tool call's result.
func RanTool(s *State, t *Turn, r events.SessionChatToolRan) []events.Event {
	if next := t.Next(); !s.live() || next.Kind != StepTool || next.Call != r.Call || next.Index != r.Index {
		return nil
	}
	r.TurnID = t.ID
	return turnEvent(t, "tool:"+strconv.Itoa(r.Call)+":"+strconv.Itoa(r.Index), r)
}

// Answer ends the turn with the model's last answer (call is the model call it came from). A turn ends once: an
// answer and a failure share their ID.
func Answer(s *State, t *Turn, call int, a events.SessionChatAnswered) []events.Event {
	if next := t.Next(); !s.live() || next.Kind != StepModel || next.Call != call {
		return nil
	}
	a.TurnID = t.ID
	return turnEvent(t, "end", a)
}

// FailTurn ends the turn with a failure the user can read; code is its kind in internal/errs's words.
func FailTurn(s *State, t *Turn, reason, code string) []events.Event {
	if !s.live() || t.Done() {
		return nil
	}
	return turnEvent(t, "end", events.SessionChatFailed{TurnID: t.ID, Error: reason, Code: code})
}

// Summarize records a summary of the history's first sum.Upto entries, made when the latest summary covered the
// first `from`. If another summary was recorded meanwhile, nothing is. Its ID derives from the event that set the
// summarizing off.
func Summarize(s *State, cause string, from int, sum events.SessionSummarized) []events.Event {
	if !s.live() || s.Julep.SummaryUpto() != from || sum.Upto <= from || sum.Upto > len(s.Julep.Entries) {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(cause, "summary:"+strconv.Itoa(sum.Upto)), sum)}
}

// FailSummary records that a summary of the history's entries from..f.Upto could not be made, and why: the older
// turns stay (truncated when over the budget) and the session says so. Once for a reason and a starting point: the
// turns after it try again, and say nothing new while it fails the same way.
func FailSummary(s *State, cause string, f events.SessionSummaryFailed) []events.Event {
	if !s.live() || s.Julep.SummaryUpto() != f.From {
		return nil
	}
	if last := s.Julep.SummaryFailed; last != nil && last.From == f.From && last.Reason == f.Reason {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(cause, "summary-failed"), f)}
}

func (s *State) live() bool { return s.Exists && !s.Deleted && s.Julep != nil }

// History is the messages of the history from entry `from` on, as a model is sent them: tool calls the platform
// ran and their results only when withTools.
func (j *Julep) History(from int, withTools bool) []events.JulepMessage {
	return HistoryMessages(j.Entries[min(from, len(j.Entries)):], withTools)
}

// HistoryMessages are entries as a model is sent them (the platform's tool calls and results only when withTools).
func HistoryMessages(entries []Entry, withTools bool) []events.JulepMessage {
	var out []events.JulepMessage
	for _, e := range entries {
		if withTools || !e.RanTool() {
			out = append(out, e.Message())
		}
	}
	return out
}

// RanTool reports whether the entry is a tool call the platform ran, or its result.
func (e Entry) RanTool() bool { return e.Source == SourceToolRequest || e.Source == SourceToolResponse }

// Message is the entry as a chat message.
func (e Entry) Message() events.JulepMessage {
	return events.JulepMessage{Role: e.Role, Name: e.Name, Content: e.Content, ToolCalls: e.ToolCalls, ToolCallID: e.ToolCallID}
}

// SummaryMessage is how a summary of the earlier conversation is put before the history it stands in for.
func SummaryMessage(summary string) events.JulepMessage {
	return events.JulepMessage{Role: "system", Content: "Summary of the conversation so far:\n" + summary}
}

// WithTools says whether a turn's prompt carries the tool calls of earlier turns: the session forwards them, or
// the request recalls them.
func (j *Julep) WithTools(t *Turn) bool { return j.Spec.ForwardToolCalls || t.Request.RecallTools }

// Prompt is what model call `call` of a prepared turn sends: the system message, the summary and the history the
// turn was prepared with, its input, and the tool calls run so far with their results.
func (j *Julep) Prompt(t *Turn, call int) []events.JulepMessage {
	p := t.Prepared
	var out []events.JulepMessage
	if p.System != "" {
		out = append(out, events.JulepMessage{Role: "system", Content: p.System})
	}
	if p.SummaryUpto > 0 {
		if sum, ok := j.Summary(p.SummaryUpto); ok {
			out = append(out, SummaryMessage(sum.Summary))
		}
	}
	out = append(out, j.History(max(p.HistoryFrom, p.SummaryUpto), j.WithTools(t))...)
	out = append(out, p.Input...)
	for i := 0; i < call && i < len(t.Calls); i++ {
		c := t.Calls[i]
		out = append(out, events.JulepMessage{Role: "assistant", Content: c.Text, ToolCalls: c.ToolCalls})
		for _, r := range t.Ran[i] {
			out = append(out, toolMessage(r))
		}
	}
	return out
}

// Usage is what the turn's model calls used so far.
func (t *Turn) Usage() events.JulepUsage {
	var u events.JulepUsage
	for _, c := range t.Calls {
		u.PromptTokens += c.Usage.PromptTokens
		u.CompletionTokens += c.Usage.CompletionTokens
		u.TotalTokens += c.Usage.TotalTokens
	}
	return u
}

// SessionPatch names the Julep settings a PATCH changes (nil: unchanged). Metadata is merged into the old;
// recall options are merged field by field (RecallOptions holds the fields sent, as JSON).
type SessionPatch struct {
	Situation, SystemTemplate, ContextOverflow *string
	RenderTemplates, AutoRunTools, ForwardTool *bool
	TokenBudget                                **int
	Metadata                                   json.RawMessage
	RecallOptions                              json.RawMessage
}

// PatchJulep changes the settings the patch names. A recall options patch that is null removes them; an object
// changes the fields it names.
func PatchJulep(s *State, account, id string, p SessionPatch) ([]events.Event, error) {
	if !s.OwnedJulep(account) {
		return nil, errs.NotFoundf("session", id)
	}
	spec := s.Julep.Spec
	if p.Situation != nil {
		spec.Situation = p.Situation
	}
	if p.SystemTemplate != nil {
		spec.SystemTemplate = p.SystemTemplate
	}
	if p.ContextOverflow != nil {
		spec.ContextOverflow = *p.ContextOverflow
	}
	if p.RenderTemplates != nil {
		spec.RenderTemplates = *p.RenderTemplates
	}
	if p.AutoRunTools != nil {
		spec.AutoRunTools = *p.AutoRunTools
	}
	if p.ForwardTool != nil {
		spec.ForwardToolCalls = *p.ForwardTool
	}
	if p.TokenBudget != nil {
		spec.TokenBudget = *p.TokenBudget
	}
	spec.Metadata = events.MergeObjects(spec.Metadata, p.Metadata)
	if p.RecallOptions != nil {
		if bytes.Equal(bytes.TrimSpace(p.RecallOptions), []byte("null")) {
			spec.RecallOptions = nil
		} else {
			var merged events.JulepRecallOptions
			if spec.RecallOptions != nil {
				merged = *spec.RecallOptions
			}
			if err := json.Unmarshal(p.RecallOptions, &merged); err != nil {
				return nil, errs.InvalidField("recall_options", "recall_options must be an object: %v", err)
			}
			spec.RecallOptions = &merged
		}
	}
	return []events.Event{events.SessionJulepUpdated{Spec: spec}}, nil
}

// JulepView is a Julep session as faces and the read model show it.
type JulepView struct {
	// ID is the session's UUID (its aggregate is events.JulepAggregateID(Account, ID)).
	ID      string                  `json:"id"`
	Account string                  `json:"account"`
	Spec    events.JulepSessionSpec `json:"spec"`
	// Summary is the latest summary of its history ("" before one is made).
	Summary string    `json:"summary,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// JulepView is the session as it stands (the zero view for a Fixie session).
func (s *State) JulepView() JulepView {
	if s.Julep == nil {
		return JulepView{}
	}
	v := JulepView{ID: events.JulepPublicID(s.ID), Account: s.Account, Spec: s.Julep.Spec, Created: s.Created, Updated: s.Modified}
	if n := len(s.Julep.Summaries); n > 0 {
		v.Summary = s.Julep.Summaries[n-1].Summary
	}
	return v
}

// FoldJulepView folds one session event into a read model's view of a Julep session: the events that change what
// the view shows. It reports whether the view changed, and false for every event of a Fixie session.
func FoldJulepView(v *JulepView, e events.Envelope) bool {
	switch d := e.Event.(type) {
	case events.SessionCreated:
		if d.Julep == nil {
			return false
		}
		*v = JulepView{ID: events.JulepPublicID(e.AggregateID), Account: e.Account, Spec: *d.Julep, Created: e.Time, Updated: e.Time}
	case events.SessionJulepUpdated:
		v.Spec, v.Updated = d.Spec, e.Time
	case events.SessionSummarized:
		v.Summary = d.Summary
	case events.SessionChatAnswered:
		v.Updated = e.Time
	default:
		return false
	}
	return v.ID != ""
}

// Clone is a copy of the Julep side of a session that the fold's later changes do not reach (turns are changed in
// place as their steps come). Nil for a Fixie session.
func (j *Julep) Clone() *Julep {
	if j == nil {
		return nil
	}
	c := *j
	c.Entries = slices.Clone(j.Entries)
	c.Summaries = slices.Clone(j.Summaries)
	if j.SummaryFailed != nil {
		f := *j.SummaryFailed
		c.SummaryFailed = &f
	}
	c.byTurn = maps.Clone(j.byTurn)
	c.Turns = make([]*Turn, len(j.Turns))
	for i, t := range j.Turns {
		tc := *t
		tc.Calls = slices.Clone(t.Calls)
		tc.Ran = make([][]events.SessionChatToolRan, len(t.Ran))
		for k, r := range t.Ran {
			tc.Ran[k] = slices.Clone(r)
		}
		c.Turns[i] = &tc
	}
	return &c
}
