// Package execution is the execution aggregate: one run of a Julep task. Its events are the execution's creation,
// each transition it goes through, and each side effect the engine asked for; its state is the task's stepper state
// (internal/workflow) folded from them, which is all the engine needs to decide what comes next on any node.
//
// The decisions here are pure: Start, Advance, Complete, Resume and Cancel turn a state (and an input, an effect's
// result) into events. The engine (handlers/tasks) and the commands (internal/commands) load the state through an
// eventstore.Repo, decide with these, and append. Besides events and errs it imports internal/workflow, the task
// language, which is pure too.
package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/workflow"
)

// Aggregate is the aggregate type of executions in the log.
const Aggregate = "execution"

// Execution is an execution as faces and read models show it.
type Execution struct {
	// ID is the execution's UUID; Task and Agent those of its task and the task's agent.
	ID       string          `json:"id"`
	Account  string          `json:"account"`
	Task     string          `json:"task"`
	Agent    string          `json:"agent"`
	Input    json.RawMessage `json:"input"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Status   workflow.Status `json:"status"`
	// Output is the output once it succeeded; Error the reason once it failed or was cancelled.
	Output      json.RawMessage `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
	Transitions int             `json:"transitions"`
	Created     time.Time       `json:"created"`
	Updated     time.Time       `json:"updated"`
	// Timers are the sleeps under way: when each effect (by key) is due. The sweeper wakes those whose timer
	// did not fire.
	Timers map[string]time.Time `json:"timers,omitempty"`
}

// FoldView folds one event into the view: the only mapping from execution events to what faces and read models
// show. State.Apply calls it; a read model calls it alone, without the task.
func (v *Execution) FoldView(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.ExecutionCreated:
		*v = Execution{ID: events.JulepPublicID(e.AggregateID), Account: e.Account, Task: d.Task, Agent: d.Agent,
			Input: d.Input, Metadata: d.Metadata, Status: workflow.StatusQueued, Created: e.Time, Updated: e.Time}
	case events.ExecutionTransitioned:
		v.Updated = e.Time
		v.Transitions++
		v.Status = workflow.Status(d.Status)
		var tr struct {
			Type    workflow.TransitionType `json:"type"`
			Output  json.RawMessage         `json:"output"`
			Current workflow.Target         `json:"current"`
		}
		_ = json.Unmarshal(d.Transition, &tr)
		delete(v.Timers, effectKey(tr.Current.Scope, tr.Current.Step))
		switch tr.Type {
		case workflow.TypeFinish:
			v.Output = tr.Output
		case workflow.TypeError, workflow.TypeCancelled:
			var msg string
			if json.Unmarshal(tr.Output, &msg) != nil {
				msg = string(tr.Output)
			}
			v.Error = msg
		}
		if v.Status.Terminal() {
			v.Timers = nil
		}
	case events.ExecutionEffectRequested:
		var ef struct {
			Kind  workflow.EffectKind `json:"kind"`
			Until time.Time           `json:"until"`
		}
		if json.Unmarshal(d.Effect, &ef) == nil && ef.Kind == workflow.EffectTimer {
			if v.Timers == nil {
				v.Timers = map[string]time.Time{}
			}
			v.Timers[d.Key] = ef.Until
		}
	}
}

func effectKey(scope, step int) string { return strconv.Itoa(scope) + "/" + strconv.Itoa(step) }

// State is the execution aggregate rebuilt from its events.
type State struct {
	Execution
	Exists bool
	// Flow is where the task's steps are; Task the task it runs (parsed from the source the execution copied).
	Flow *workflow.State
	Task *workflow.Task
	// Requested holds the effects asked for whose step has not moved on yet, by key.
	Requested map[string]workflow.Effect
	// LastTransition is the stream sequence of the last transition: the engine decides on the delivery of that one.
	LastTransition uint64
	// Broken says why the execution cannot go on (its source no longer parses, or the log holds a transition the
	// fold refuses): the engine fails it with this reason.
	Broken string
}

// Apply folds one event: the only fold of execution events.
func (s *State) Apply(e events.Envelope) {
	s.Execution.FoldView(e)
	switch d := e.Event.(type) {
	case events.ExecutionCreated:
		s.Exists = true
		s.Flow = workflow.NewState()
		s.Requested = map[string]workflow.Effect{}
		t, err := workflow.Parse(d.Source)
		if err != nil {
			s.Broken = "the task no longer parses: " + err.Error()
			return
		}
		s.Task = t
	case events.ExecutionTransitioned:
		s.LastTransition = e.Sequence
		if s.Task == nil || s.Broken != "" {
			if s.Status.Terminal() && s.Flow != nil {
				s.Flow.Status = s.Status // what ended a broken execution
			}
			return
		}
		tr, err := DecodeTransition(d.Transition)
		if err == nil {
			err = workflow.Apply(s.Task, s.Flow, tr)
		}
		if err != nil {
			s.Broken = fmt.Sprintf("transition %d cannot be folded: %v", s.Transitions, err)
			return
		}
		for key, ef := range s.Requested {
			if f := s.Flow.Frames[ef.Scope]; f == nil || f.Step != ef.Step || s.Flow.Status.Terminal() {
				delete(s.Requested, key)
			}
		}
	case events.ExecutionEffectRequested:
		var ef workflow.Effect
		if err := decode(d.Effect, &ef); err == nil && s.Requested != nil {
			s.Requested[d.Key] = ef
		}
	}
}

// Clone returns a copy the fold's later changes do not reach.
func (s *State) Clone() State {
	c := *s
	if s.Flow != nil {
		c.Flow = s.Flow.Clone()
	}
	c.Requested = maps.Clone(s.Requested)
	c.Timers = maps.Clone(s.Timers)
	return c
}

// Owned reports whether the execution exists and is account's.
func (s *State) Owned(account string) bool { return s.Exists && s.Account == account }

// DecodeTransition reads a transition as an event holds it. Numbers stay json.Number, so that a state folded from
// the log and one folded as decided see the same values.
func DecodeTransition(raw json.RawMessage) (workflow.Transition, error) {
	var tr workflow.Transition
	err := decode(raw, &tr)
	return tr, err
}

func decode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// DecodeValue reads a JSON value (an input, an output) as expressions see it.
func DecodeValue(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var v any
	err := decode(raw, &v)
	return v, err
}

// NewExecution is what a client asks for.
type NewExecution struct {
	// ID is the execution's UUID (derived from the request, so that a retried request makes nothing new).
	ID       string
	Task     events.TaskSpec
	TaskID   string
	Input    json.RawMessage
	Metadata json.RawMessage
}

// Start decides creating an execution: its creation and its init transition. The input must match the task's
// input_schema (errs.Invalid naming the field, "input.topics[0]"). The same request again appends nothing.
func Start(s *State, account string, in NewExecution, now time.Time) ([]events.Event, error) {
	if s.Exists {
		if s.Account != account {
			return nil, errs.E(errs.Conflict, "the id %s is already in use by another execution", in.ID)
		}
		return nil, nil
	}
	t, err := workflow.Parse(in.Task.Source)
	if err != nil {
		return nil, err
	}
	input, err := DecodeValue(in.Input)
	if err != nil {
		return nil, errs.InvalidField("input", "the input is not JSON: %v", err)
	}
	tr, err := workflow.Start(t, input, workflow.Env{ExecutionID: in.ID, Now: now})
	if err != nil {
		return nil, err
	}
	created := events.ExecutionCreated{Task: in.TaskID, Agent: in.Task.Agent, Source: in.Task.Source, Input: in.Input,
		Metadata: in.Metadata}
	ev, err := transitioned(in.ID, 0, tr, workflow.StatusOf(tr.Type))
	if err != nil {
		return nil, err
	}
	return []events.Event{created, ev}, nil
}

// Env is what the engine's decisions depend on besides the state.
type Env struct {
	Now        time.Time
	AgentTools []workflow.Tool
	Limits     workflow.Limits
}

func (s *State) env(e Env) workflow.Env {
	return workflow.Env{ExecutionID: s.ID, Now: e.Now, AgentTools: e.AgentTools, Limits: e.Limits}
}

// Advance decides what can happen now: the transitions the task's steps give without waiting for anything (up to
// max of them, deciding again on their result), or else a request for each effect not yet asked for. Nothing
// (and no error) means the execution waits: for effects under way, for input, or for nothing (it has ended).
func Advance(ctx context.Context, s *State, e Env, max int) ([]events.Event, error) {
	if !s.Exists || s.Flow.Status.Terminal() {
		return nil, nil
	}
	if s.Broken != "" {
		return s.fail(e, s.Broken)
	}
	flow := s.Flow
	var out []events.Event
	for len(out) < max {
		d, err := workflow.Decide(ctx, s.Task, flow, s.env(e))
		if err != nil {
			return nil, err
		}
		if len(d.Transitions) == 0 {
			if len(out) > 0 {
				return out, nil
			}
			return s.request(d.Effects)
		}
		if flow == s.Flow {
			flow = s.Flow.Clone()
		}
		evs, err := s.recordOn(flow, d.Transitions, s.Transitions+len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
		if flow.Status.Terminal() {
			break
		}
	}
	return out, nil
}

// request asks for the effects not asked for yet.
func (s *State) request(effects []workflow.Effect) ([]events.Event, error) {
	var out []events.Event
	for _, ef := range effects {
		if _, asked := s.Requested[ef.Key]; asked {
			continue
		}
		raw, err := json.Marshal(ef)
		if err != nil {
			return nil, fmt.Errorf("execution %s: encode effect %s: %w", s.ID, ef.Key, err)
		}
		out = append(out, events.ExecutionEffectRequested{Key: ef.Key, Effect: raw})
	}
	return out, nil
}

// Complete decides the transitions an effect's result gives. A result for a step the execution is no longer at
// (already recorded, or cancelled meanwhile) gives nothing.
func Complete(ctx context.Context, s *State, key string, r workflow.Result, e Env) ([]events.Event, error) {
	if !s.Exists || s.Flow.Status.Terminal() || s.Broken != "" {
		return nil, nil
	}
	// The result goes through JSON, as the fold will read it.
	if r.Output != nil {
		raw, err := json.Marshal(r.Output)
		if err != nil {
			return s.fail(e, fmt.Sprintf("%s: the result cannot be recorded: %v", key, err))
		}
		if r.Output, err = DecodeValue(raw); err != nil {
			return nil, err
		}
	}
	trs, err := workflow.Complete(ctx, s.Task, s.Flow, key, r, s.env(e))
	if errors.Is(err, workflow.ErrStale) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.record(trs)
}

// Resume answers the oldest step waiting for input (PUT {status: "running", input}).
func Resume(s *State, account, id string, input json.RawMessage, e Env) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("execution", id)
	}
	if s.Flow.Status != workflow.StatusAwaitingInput {
		return nil, errs.E(errs.Conflict, "execution %s is %s, not awaiting_input: there is nothing to resume", s.ID, s.Flow.Status)
	}
	v, err := DecodeValue(input)
	if err != nil {
		return nil, errs.InvalidField("input", "the input is not JSON: %v", err)
	}
	trs, err := workflow.Resume(s.Task, s.Flow, v, s.env(e))
	if errors.Is(err, workflow.ErrStale) {
		return nil, errs.E(errs.Conflict, "execution %s has no step waiting for input", s.ID)
	}
	if err != nil {
		return nil, err
	}
	return s.record(trs)
}

// Cancel ends the execution (PUT {status: "cancelled"}). Cancelling an execution that has ended is a conflict,
// except that cancelling a cancelled one again is nothing (a client's retry).
func Cancel(s *State, account, id, reason string, e Env) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("execution", id)
	}
	if s.Flow.Status == workflow.StatusCancelled {
		return nil, nil
	}
	tr, err := workflow.Cancel(s.Flow, reason, s.env(e))
	if errors.Is(err, workflow.ErrStale) {
		return nil, errs.E(errs.Conflict, "execution %s has already %s", s.ID, s.Flow.Status)
	}
	if err != nil {
		return nil, err
	}
	return s.record([]workflow.Transition{tr})
}

// fail ends the execution with an error transition.
func (s *State) fail(e Env, reason string) ([]events.Event, error) {
	cur := workflow.Target{Workflow: "main"}
	tr := workflow.Transition{Type: workflow.TypeError, Output: reason, Current: cur, At: e.Now}
	ev, err := transitioned(s.ID, s.Transitions, tr, workflow.StatusFailed)
	if err != nil {
		return nil, err
	}
	return []events.Event{ev}, nil
}

// record turns decided transitions into events, with the status each leaves the execution in.
func (s *State) record(trs []workflow.Transition) ([]events.Event, error) {
	return s.recordOn(s.Flow.Clone(), trs, s.Transitions)
}

// recordOn folds decided transitions into flow, as the log will hold them (through JSON, so that what is decided
// next on flow is what a node that reads them from the log decides), and returns their events, the first being
// the n-th transition of the execution.
func (s *State) recordOn(flow *workflow.State, trs []workflow.Transition, n int) ([]events.Event, error) {
	out := make([]events.Event, 0, len(trs))
	for _, tr := range trs {
		raw, err := json.Marshal(tr)
		if err != nil {
			return nil, fmt.Errorf("execution %s: encode transition %d: %w", s.ID, n, err)
		}
		if tr, err = DecodeTransition(raw); err != nil {
			return nil, fmt.Errorf("execution %s: decode transition %d: %w", s.ID, n, err)
		}
		if err := workflow.Apply(s.Task, flow, tr); err != nil {
			return nil, fmt.Errorf("execution %s: the stepper decided a transition its fold refuses: %w", s.ID, err)
		}
		out = append(out, events.ExecutionTransitioned{ID: TransitionID(s.ID, n), Transition: raw, Status: string(flow.Status)})
		n++
	}
	return out, nil
}

// transitioned is the event of the n-th transition (from 0) of execution id.
func transitioned(id string, n int, tr workflow.Transition, status workflow.Status) (events.Event, error) {
	raw, err := json.Marshal(tr)
	if err != nil {
		return nil, fmt.Errorf("execution %s: encode transition %d: %w", id, n, err)
	}
	return events.ExecutionTransitioned{ID: TransitionID(id, n), Transition: raw, Status: string(status)}, nil
}

// TransitionID is the UUID of an execution's n-th transition.
func TransitionID(execution string, n int) string {
	return events.DeriveUUID(execution+"/"+strconv.Itoa(n), "transition")
}
