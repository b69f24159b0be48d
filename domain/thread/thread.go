// Package thread is the thread aggregate of the Assistants API: a thread's messages, and its runs with their steps.
// It holds the state, the one fold of thread events, and the decisions of a run's turns (what the run worker
// records): the commands load and append, this package decides.
//
// It imports events only.
package thread

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/contrailhq/contrail/events"
)

// State is the thread aggregate rebuilt from its events: its messages, and its runs with their steps. The run
// worker reads it to build the model's prompt, and decides on it what a turn records.
type State struct {
	ID            string
	Account       string
	Exists        bool
	Deleted       bool
	Metadata      map[string]string
	ToolResources json.RawMessage
	Messages      map[string]*Message
	// Order lists message IDs in the order they were created.
	Order []string
	Runs  map[string]*Run
	Steps map[string]*Step
	// ActiveRun is the run that blocks the thread (queued, in progress, requires action or cancelling), or "".
	ActiveRun string
	// Seq is the stream sequence of the last event folded.
	Seq uint64
	// Version is where the thread's history ends, what an append decided on this state expects (set by LoadThread
	// and by the worker's commands; Apply does not keep it, since it only sees the events it knows).
	Version events.Version
}

// Message is a message of the thread.
type Message struct {
	events.MessageCreated
	Seq     uint64
	Deleted bool
}

// Text joins the message's text parts.
func (m *Message) Text() string {
	if len(m.Content) == 1 && m.Content[0].Type == "text" {
		return m.Content[0].Text // most are: a prompt reads every message of the thread on each turn
	}
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Run is a run of the thread.
type Run struct {
	events.RunCreated
	Status string
	Seq    uint64
	// QueuedBy is the ID of the event that last queued the run (its creation, or the submission of tool outputs):
	// the cause the next turn's RunStarted derives from.
	QueuedBy string
	// Turn is the ID of the RunStarted event of the turn in progress: the cause every event the turn records
	// derives from.
	Turn string
	// CancelledBy is the ID of the cancel request, the cause of the cancellation's events.
	CancelledBy string
	// Steps lists the run's step IDs in order.
	Steps []string
	// Usage sums the model calls of the run's steps.
	Usage events.TokenUsage
}

// Step is a step of a run.
type Step struct {
	events.StepCreated
	Status  string
	Seq     uint64
	Outputs map[string]string
}

// Clone copies the state so that folding more events into either copy leaves the other as it was (eventstore.Repo.Get
// hands out copies). What may still change in place is copied: runs still active and steps in progress. The rest
// (messages, runs that ended, steps that settled) is shared, since Apply replaces such an object with a changed copy
// rather than change it (see message, run and step). Slices are clipped, so that an append to either copy moves it
// to an array of its own. A long thread is cloned on every run; copying each of its messages was most of that.
func (t *State) Clone() State {
	out := *t
	out.Order = slices.Clip(t.Order)
	out.Messages = maps.Clone(t.Messages)
	if t.Runs != nil {
		out.Runs = make(map[string]*Run, len(t.Runs))
		for id, r := range t.Runs {
			if !Active(r.Status) {
				out.Runs[id] = r
				continue
			}
			c := *r
			c.Steps = slices.Clip(r.Steps)
			out.Runs[id] = &c
		}
	}
	if t.Steps != nil {
		out.Steps = make(map[string]*Step, len(t.Steps))
		for id, st := range t.Steps {
			if stepSettled(st) {
				out.Steps[id] = st
				continue
			}
			c := *st
			out.Steps[id] = &c
		}
	}
	return out
}

// The objects a clone shares with its original: Apply changes them by replacing them with a changed copy. A run or
// step is changed in place only while it may be changing (active, in progress), when no clone shares it.

func stepSettled(st *Step) bool { return st.Status != events.StepStatusInProgress }

// message returns the thread's message id to change: a copy put in its place, since clones share messages.
func (t *State) message(id string) *Message {
	m := t.Messages[id]
	if m == nil {
		return nil
	}
	c := *m
	t.Messages[id] = &c
	return &c
}

// run returns the thread's run id to change, copied first when it has ended (and clones may share it).
func (t *State) run(id string) *Run {
	r := t.Runs[id]
	if r == nil || Active(r.Status) {
		return r
	}
	c := *r
	c.Steps = slices.Clip(r.Steps)
	t.Runs[id] = &c
	return &c
}

// step returns the thread's step id to change, copied first when it has settled (and clones may share it).
func (t *State) step(id string) *Step {
	st := t.Steps[id]
	if st == nil || !stepSettled(st) {
		return st
	}
	c := *st
	t.Steps[id] = &c
	return &c
}

// Ended reports whether a run can need no more work: it ended (a terminal status), or the thread or the run is
// gone. Nothing brings such a run back: tool outputs and cancels are refused for it.
func (t *State) Ended(runID string) bool {
	r := t.Runs[runID]
	return !t.Exists || t.Deleted || r == nil || !Active(r.Status)
}

// NeedsWork reports whether a run of the thread is in a status a worker moves on from.
func (t *State) NeedsWork(runID string) bool {
	r := t.Runs[runID]
	if !t.Exists || t.Deleted || r == nil {
		return false
	}
	switch r.Status {
	case events.RunStatusQueued, events.RunStatusInProgress, events.RunStatusCancelling:
		return true
	}
	return false
}

// Apply folds one event.
func (t *State) Apply(e events.Envelope) {
	t.Seq = e.Sequence
	switch d := e.Event.(type) {
	case events.ThreadCreated:
		t.ID, t.Account, t.Exists = e.AggregateID, e.Account, true
		t.Metadata, t.ToolResources = d.Metadata, d.ToolResources
		t.Messages, t.Runs, t.Steps = map[string]*Message{}, map[string]*Run{}, map[string]*Step{}
	case events.ThreadModified:
		t.Metadata, t.ToolResources = d.Metadata, d.ToolResources
	case events.ThreadDeleted:
		t.Deleted = true
	case events.MessageCreated:
		t.Messages[d.MessageID] = &Message{MessageCreated: d, Seq: e.Sequence}
		t.Order = append(t.Order, d.MessageID)
	case events.MessageModified:
		if m := t.message(d.MessageID); m != nil {
			m.Metadata = d.Metadata
		}
	case events.MessageDeleted:
		if m := t.message(d.MessageID); m != nil {
			m.Deleted = true
		}
	case events.RunCreated:
		t.Runs[d.RunID] = &Run{RunCreated: d, Status: events.RunStatusQueued, Seq: e.Sequence, QueuedBy: e.ID}
		t.ActiveRun = d.RunID
	case events.StepCreated:
		st := &Step{StepCreated: d, Status: events.StepStatusInProgress, Seq: e.Sequence}
		if d.Completed {
			st.Status = events.StepStatusCompleted
		}
		t.Steps[d.StepID] = st
		if r := t.run(d.RunID); r != nil {
			r.Steps = append(r.Steps, d.StepID)
			if d.Usage != nil {
				r.Usage = r.Usage.Add(*d.Usage)
			}
		}
	case events.StepCompleted:
		if s := t.step(d.StepID); s != nil {
			s.Status = events.StepStatusCompleted
		}
	case events.StepEnded:
		if s := t.step(d.StepID); s != nil {
			s.Status = d.Status
		}
	default:
		t.applyRun(e)
	}
}

// applyRun folds a run's change of status.
func (t *State) applyRun(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.RunStarted:
		if r := t.run(d.RunID); r != nil {
			r.Turn = e.ID
		}
	case events.RunToolOutputsSubmitted:
		if r := t.run(d.RunID); r != nil {
			r.QueuedBy = e.ID
		}
		if s := t.step(d.StepID); s != nil {
			s.Status, s.Outputs = events.StepStatusCompleted, OutputsByCall(d)
			if len(d.ToolCalls) > 0 {
				s.ToolCalls = EndedCalls(s.ToolCalls, d.ToolCalls)
			}
		}
	case events.RunCancelling:
		if r := t.run(d.RunID); r != nil {
			r.CancelledBy = e.ID
		}
	case events.RunModified:
		if r := t.run(d.RunID); r != nil {
			r.Metadata = d.Metadata
		}
	}
	runID, status, ok := RunStatus(e.Event)
	if !ok {
		return
	}
	r := t.run(runID)
	if r == nil {
		return
	}
	r.Status = status
	if !Active(status) && t.ActiveRun == runID {
		t.ActiveRun = ""
	}
}

// OutputsByCall maps each tool call of a submission to its output: the one merge of submitted outputs into a step,
// which the thread's fold and the step's view share.
func OutputsByCall(d events.RunToolOutputsSubmitted) map[string]string {
	outputs := make(map[string]string, len(d.Outputs))
	for _, o := range d.Outputs {
		outputs[o.ToolCallID] = o.Output
	}
	return outputs
}

// EndedCalls replaces a step's calls with those of the same IDs in ended (a server tool's calls as they ended, in
// RunToolOutputsSubmitted): the one merge, which the thread's fold and the step's view share.
func EndedCalls(calls, ended []events.ToolCall) []events.ToolCall {
	out := slices.Clone(calls)
	for i, c := range out {
		if j := slices.IndexFunc(ended, func(e events.ToolCall) bool { return e.ID == c.ID }); j >= 0 {
			out[i] = ended[j]
		}
	}
	return out
}

// RunStatus is the status an event leaves its run in: the one mapping of run events to statuses, which the read
// model and the streams use too. ok is false for an event that does not change a run's status.
func RunStatus(ev events.Event) (runID, status string, ok bool) {
	switch d := ev.(type) {
	case events.RunStarted:
		return d.RunID, events.RunStatusInProgress, true
	case events.RunRequiresAction:
		return d.RunID, events.RunStatusRequiresAction, true
	case events.RunToolOutputsSubmitted:
		return d.RunID, events.RunStatusQueued, true
	case events.RunCancelling:
		return d.RunID, events.RunStatusCancelling, true
	case events.RunCompleted:
		return d.RunID, events.RunStatusCompleted, true
	case events.RunIncomplete:
		return d.RunID, events.RunStatusIncomplete, true
	case events.RunFailed:
		return d.RunID, events.RunStatusFailed, true
	case events.RunCancelled:
		return d.RunID, events.RunStatusCancelled, true
	case events.RunExpired:
		return d.RunID, events.RunStatusExpired, true
	}
	return "", "", false
}

// Active reports whether a run status still blocks its thread: anything but a terminal status.
func Active(status string) bool {
	switch status {
	case events.RunStatusQueued, events.RunStatusInProgress, events.RunStatusRequiresAction, events.RunStatusCancelling:
		return true
	}
	return false
}

// Owned reports whether the thread exists, is not deleted and is account's.
func (t *State) Owned(account string) bool {
	return t.Exists && !t.Deleted && t.Account == account
}

// Live lists the thread's messages that are not deleted, in order.
func (t *State) Live() []*Message {
	out := make([]*Message, 0, len(t.Order))
	for _, id := range t.Order {
		if m := t.Messages[id]; !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// Attachment is a file attached to a message for tools: code_interpreter gets it in /mnt/data, file_search
// searches it (in the thread's own vector store).
type Attachment struct {
	FileID string `json:"file_id"`
	Tools  []struct {
		Type string `json:"type"`
	} `json:"tools"`
}

// For reports whether the attachment is for a tool.
func (a Attachment) For(tool string) bool {
	for _, t := range a.Tools {
		if t.Type == tool {
			return true
		}
	}
	return false
}

// AttachedFiles lists the files the thread's messages attach for a tool, in the order they came.
func (t *State) AttachedFiles(tool string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range t.Live() {
		var atts []Attachment
		_ = json.Unmarshal(m.Attachments, &atts) // checked when the message was made
		for _, a := range atts {
			if a.For(tool) && !seen[a.FileID] {
				seen[a.FileID] = true
				out = append(out, a.FileID)
			}
		}
	}
	return out
}

// TurnMessageID is the ID of the message a turn writes.
func TurnMessageID(turn string) string { return "msg_" + events.DeriveID(turn, "message") }

// TurnMessageStepID is the ID of the step that records a turn's message.
func TurnMessageStepID(turn string) string { return "step_" + events.DeriveID(turn, "message-step") }

// TurnToolStepID is the ID of the step that records a turn's tool calls.
func TurnToolStepID(turn string) string { return "step_" + events.DeriveID(turn, "tool-step") }

// TurnResult is the model's answer in one turn.
type TurnResult struct {
	Text      string
	ToolCalls []events.ToolCall
	Usage     events.TokenUsage
	// Incomplete, when set, ends the run incomplete for this reason ("max_completion_tokens"); the message is
	// then incomplete too.
	Incomplete string
	// Annotations are the text's file citations.
	Annotations []events.Annotation
	// Images are files (code_interpreter's charts) the message shows after its text.
	Images []string
}

// RecordedTurn rebuilds the answer of the run's current turn from the log when the turn recorded its first event
// before it was interrupted; it reports false when the turn recorded nothing (the model must be asked).
func (t *State) RecordedTurn(r *Run) (TurnResult, bool) {
	if r.Turn == "" {
		return TurnResult{}, false
	}
	var res TurnResult
	found := false
	if s := t.Steps[TurnToolStepID(r.Turn)]; s != nil {
		res.ToolCalls, found = s.ToolCalls, true
		if s.Usage != nil {
			res.Usage = *s.Usage
		}
	}
	if m := t.Messages[TurnMessageID(r.Turn)]; m != nil {
		res.Text, found = m.Text(), true
		if m.Usage != nil {
			res.Usage = *m.Usage
		}
		if m.Status == events.MessageStatusIncomplete {
			res.Incomplete = "max_completion_tokens"
		}
	}
	return res, found
}

// Turn is what a turn records for the model's answer: a tool-calls step and requires_action when the model called
// tools, else the message with its step and the run's end; IDs derive from the turn, and what the thread already
// holds (a turn finished after a crash) is not recorded again.
func Turn(t *State, r *Run, turn string, res TurnResult) []events.Event {
	var evs []events.Event
	add := func(label string, e events.Event) { evs = append(evs, events.WithID(events.DeriveID(turn, label), e)) }
	usage := res.Usage
	usageAt := func() *events.TokenUsage { u := usage; return &u }
	newUsage := events.TokenUsage{}
	toolStep, msgStep, msgID := TurnToolStepID(turn), TurnMessageStepID(turn), TurnMessageID(turn)
	if len(res.ToolCalls) > 0 {
		if t.Steps[toolStep] == nil {
			add("tool-step", events.StepCreated{StepID: toolStep, RunID: r.RunID, AssistantID: r.AssistantID,
				Type: events.StepTypeToolCalls, ToolCalls: res.ToolCalls, Usage: usageAt()})
			newUsage = usage
		}
		usageAt = func() *events.TokenUsage { return nil } // counted once, on the tool-calls step
	}
	if res.Text != "" || len(res.ToolCalls) == 0 {
		if t.Messages[msgID] == nil {
			status, reason := events.MessageStatusCompleted, ""
			if res.Incomplete != "" {
				status, reason = events.MessageStatusIncomplete, "max_tokens"
			}
			content := []events.ContentPart{{Type: "text", Text: res.Text, Annotations: res.Annotations}}
			for _, id := range res.Images {
				content = append(content, events.ContentPart{Type: "image_file", ImageFile: &events.ImageFile{FileID: id}})
			}
			add("message", events.MessageCreated{MessageID: msgID, Role: "assistant",
				Content: content, AssistantID: r.AssistantID, RunID: r.RunID,
				Status: status, IncompleteReason: reason, StepID: msgStep, Usage: usageAt()})
		}
		if s := t.Steps[msgStep]; s == nil {
			// The message is whole before its step is recorded, so the step is made completed.
			add("message-step", events.StepCreated{StepID: msgStep, RunID: r.RunID, AssistantID: r.AssistantID,
				Type: events.StepTypeMessageCreation, MessageID: msgID, Usage: usageAt(), Completed: true})
			if len(res.ToolCalls) == 0 {
				newUsage = usage
			}
		} else if s.Status == events.StepStatusInProgress {
			// Recorded in progress by a build that completed message steps with an event of their own.
			add("message-step-completed", events.StepCompleted{StepID: msgStep, RunID: r.RunID})
		}
	}
	total := r.Usage.Add(newUsage)
	switch {
	case len(res.ToolCalls) > 0:
		add("requires-action", events.RunRequiresAction{RunID: r.RunID, StepID: toolStep, ToolCalls: res.ToolCalls})
	case res.Incomplete != "":
		add("incomplete", events.RunIncomplete{RunID: r.RunID, Reason: res.Incomplete, Usage: total})
	default:
		add("completed", events.RunCompleted{RunID: r.RunID, Usage: total})
	}
	return evs
}

// End is what ends an active run that did not finish its work: its steps in progress end with stepStatus
// ("cancelled", "expired", "failed") and the run with the matching status.
func End(t *State, r *Run, stepStatus, code, message string) []events.Event {
	cause := r.QueuedBy
	var evs []events.Event
	for _, id := range r.Steps {
		s := t.Steps[id]
		if s.Status != events.StepStatusInProgress {
			continue
		}
		ended := events.StepEnded{StepID: id, RunID: r.RunID, Status: stepStatus}
		if stepStatus == events.StepStatusFailed {
			ended.Code, ended.Message = code, message
		}
		evs = append(evs, events.WithID(events.DeriveID(cause, "step-"+stepStatus+"-"+id), ended))
	}
	var end events.Event
	switch stepStatus {
	case events.StepStatusCancelled:
		end = events.RunCancelled{RunID: r.RunID, Usage: r.Usage}
	case events.StepStatusExpired:
		end = events.RunExpired{RunID: r.RunID, Usage: r.Usage}
	default:
		end = events.RunFailed{RunID: r.RunID, Code: code, Message: message, Usage: r.Usage}
	}
	return append(evs, events.WithID(events.DeriveID(cause, "run-"+stepStatus), end))
}

// WaitingStep is the tool-calls step a run in requires_action waits on.
func (t *State) WaitingStep(r *Run) *Step {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if s := t.Steps[r.Steps[i]]; s.Type == events.StepTypeToolCalls && s.Status == events.StepStatusInProgress {
			return s
		}
	}
	return nil
}

// Start is what puts a queued run in progress: the start of a turn, whose ID derives from what queued the run. A
// run in any other status records nothing.
func Start(r *Run) []events.Event {
	if r.Status != events.RunStatusQueued {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(r.QueuedBy, "started"), events.RunStarted{RunID: r.RunID})}
}

// ServerTools is what a turn records when the platform answered its tool calls itself (file_search,
// code_interpreter): a tool-calls step with the calls and what each gave, completed at once with the outputs the
// model reads, and the run queued for its next turn. A step StartServerTools recorded in progress is completed
// with the calls as they ended.
func ServerTools(t *State, r *Run, turn string, calls []events.ToolCall, outputs []events.ToolOutput, usage events.TokenUsage) []events.Event {
	if r.Status != events.RunStatusInProgress || r.Turn != turn {
		return nil
	}
	step := TurnToolStepID(turn)
	done := events.RunToolOutputsSubmitted{RunID: r.RunID, StepID: step, Outputs: outputs}
	if s := t.Steps[step]; s != nil {
		if s.Status != events.StepStatusInProgress || !startedServerCalls(s) {
			return nil
		}
		done.ToolCalls = calls
		return []events.Event{events.WithID(events.DeriveID(turn, "server-outputs"), done)}
	}
	return []events.Event{
		events.WithID(events.DeriveID(turn, "tool-step"), events.StepCreated{StepID: step, RunID: r.RunID,
			AssistantID: r.AssistantID, Type: events.StepTypeToolCalls, ToolCalls: calls, Usage: &usage}),
		events.WithID(events.DeriveID(turn, "server-outputs"), done),
	}
}

// StartServerTools is what records, before they run, server tool calls with effects outside Contrail
// (code_interpreter's code, run in the thread's sandbox): the turn's tool-calls step, in progress, with the calls
// as they are about to run. ServerTools completes it; a run driven again after a crash finds it in progress
// (InterruptedCalls) and records its calls as interrupted rather than run them a second time. It records nothing
// when the turn moved on or its step is recorded already: then the calls are not to be run.
func StartServerTools(t *State, r *Run, turn string, calls []events.ToolCall, usage events.TokenUsage) []events.Event {
	if r.Status != events.RunStatusInProgress || r.Turn != turn || t.Steps[TurnToolStepID(turn)] != nil {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(turn, "tool-step"), events.StepCreated{StepID: TurnToolStepID(turn),
		RunID: r.RunID, AssistantID: r.AssistantID, Type: events.StepTypeToolCalls, ToolCalls: calls, Usage: &usage})}
}

// startedServerCalls reports whether a tool-calls step holds calls the run worker makes itself (code_interpreter),
// so that in progress it was started by StartServerTools and does not wait on a client's outputs.
func startedServerCalls(s *Step) bool {
	return s.Type == events.StepTypeToolCalls && slices.ContainsFunc(s.ToolCalls, func(c events.ToolCall) bool {
		return c.Type == CodeInterpreterTool
	})
}

// InterruptedCalls returns the calls of the run's current turn that StartServerTools recorded and nothing ended:
// the worker stopped while they ran (a crash, a node stopped). Each may have run, so none is run again: the worker
// records them as Interrupt makes them, with the step's usage.
func (t *State) InterruptedCalls(r *Run) ([]events.ToolCall, events.TokenUsage, bool) {
	if r.Status != events.RunStatusInProgress || r.Turn == "" {
		return nil, events.TokenUsage{}, false
	}
	s := t.Steps[TurnToolStepID(r.Turn)]
	if s == nil || s.Status != events.StepStatusInProgress || !startedServerCalls(s) {
		return nil, events.TokenUsage{}, false
	}
	var usage events.TokenUsage
	if s.Usage != nil {
		usage = *s.Usage
	}
	return s.ToolCalls, usage, true
}

// InterruptedError is what an interrupted call records as its output, and what the model reads of it.
const InterruptedError = events.InterruptedCallError

// Interrupt is what interrupted calls record: each call's logs say InterruptedError, and so does its output.
func Interrupt(calls []events.ToolCall) ([]events.ToolCall, []events.ToolOutput) {
	out := make([]events.ToolCall, len(calls))
	outputs := make([]events.ToolOutput, len(calls))
	for i, c := range calls {
		if c.CodeInterpreter != nil {
			ci := *c.CodeInterpreter
			ci.Outputs = append(slices.Clip(ci.Outputs), events.CodeOutput{Type: "logs", Logs: InterruptedError})
			c.CodeInterpreter = &ci
		}
		out[i] = c
		outputs[i] = events.ToolOutput{ToolCallID: c.ID, Output: InterruptedError}
	}
	return out, outputs
}
