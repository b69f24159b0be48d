package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

// Runs are the commands on the runs of a thread: those of clients (create, modify, cancel, tool outputs) and those
// of the run worker and the sweeper (turns.go).
type Runs struct {
	store      *eventstore.Store
	threads    *Threads
	assistants *Assistants
	models     ModelNames
	// runTimeout is how long a run may take before the sweeper expires it.
	runTimeout time.Duration
}

// NewRun is a run a client creates: an assistant and what the request overrides of its settings.
type NewRun struct {
	// ID fixes the run's ID (a streaming face knows it before the run exists); "" = a fresh one.
	ID                     string
	AssistantID            string
	Model                  string
	Instructions           *string
	AdditionalInstructions string
	AdditionalMessages     []NewMessage
	// Tools, when ToolsSet, replaces the assistant's tools (an empty list removes them all).
	Tools               []events.Tool
	ToolsSet            bool
	ToolChoice          json.RawMessage
	ParallelToolCalls   *bool
	ResponseFormat      json.RawMessage
	Temperature         *float64
	TopP                *float64
	MaxPromptTokens     *int
	MaxCompletionTokens *int
	Truncation          *events.Truncation
	Metadata            map[string]string
	ReasoningEffort     string
}

// CreatedRun is a run just created: its IDs, and what creating it appended (a stream of the run's progress starts
// at its first event).
type CreatedRun struct {
	ThreadID string
	RunID    string
	Appended eventstore.Appended
}

// Create queues a run on a thread. A thread whose run is still active takes no other, as OpenAI answers.
func (c *Runs) Create(ctx context.Context, actor auth.Principal, threadID string, in NewRun) (CreatedRun, error) {
	created, err := c.runCreated(ctx, actor, in)
	if err != nil {
		return CreatedRun{}, err
	}
	res, err := c.threads.updateThread(ctx, actor, threadID, func(t *Thread) ([]events.Event, error) {
		if t.ActiveRun != "" {
			return nil, errs.E(errs.Invalid, "Thread %s already has an active run %s.", threadID, t.ActiveRun)
		}
		return append(messageEvents(in.AdditionalMessages), created), nil
	})
	if err != nil {
		return CreatedRun{}, err
	}
	return CreatedRun{ThreadID: threadID, RunID: created.RunID, Appended: res}, nil
}

// CreateWithThread creates a thread with its messages and queues a run on it, in one append.
func (c *Runs) CreateWithThread(ctx context.Context, actor auth.Principal, thread NewThread, in NewRun) (CreatedRun, error) {
	if err := validateThread(thread); err != nil {
		return CreatedRun{}, err
	}
	if err := c.threads.checkAttachedFiles(ctx, actor, "thread.messages", thread.Messages); err != nil {
		return CreatedRun{}, err
	}
	if err := c.threads.checkToolResources(ctx, actor, thread); err != nil {
		return CreatedRun{}, err
	}
	created, err := c.runCreated(ctx, actor, in)
	if err != nil {
		return CreatedRun{}, err
	}
	id := thread.ID
	if id == "" {
		id = events.NewPrefixedID("thread_")
	}
	res, err := c.threads.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(t *Thread) ([]events.Event, error) {
		if t.Exists {
			return nil, errs.E(errs.Conflict, "thread %s exists", id)
		}
		evs := []events.Event{events.ThreadCreated{Metadata: thread.Metadata, ToolResources: thread.ToolResources}}
		return append(append(evs, messageEvents(thread.Messages)...), created), nil
	})
	if err != nil {
		return CreatedRun{}, err
	}
	return CreatedRun{ThreadID: id, RunID: created.RunID, Appended: res}, nil
}

// runCreated checks a new run and resolves its settings against its assistant.
func (c *Runs) runCreated(ctx context.Context, actor auth.Principal, in NewRun) (events.RunCreated, error) {
	if in.AssistantID == "" {
		return events.RunCreated{}, errs.Missing("assistant_id")
	}
	if err := validateNewRun(in); err != nil {
		return events.RunCreated{}, err
	}
	if err := c.threads.checkAttachedFiles(ctx, actor, "additional_messages", in.AdditionalMessages); err != nil {
		return events.RunCreated{}, err
	}
	a, err := c.assistants.assistant(ctx, actor, in.AssistantID)
	if err != nil {
		return events.RunCreated{}, err
	}
	run := events.RunCreated{
		RunID: in.ID, AssistantID: a.ID, Model: a.Spec.Model, Tools: a.Spec.Tools,
		ResponseFormat: a.Spec.ResponseFormat, Temperature: a.Spec.Temperature, TopP: a.Spec.TopP,
		ParallelToolCalls: true, Truncation: events.Truncation{Type: "auto"}, Metadata: in.Metadata,
		ReasoningEffort: a.Spec.ReasoningEffort, ToolChoice: in.ToolChoice,
		MaxPromptTokens: in.MaxPromptTokens, MaxCompletionTokens: in.MaxCompletionTokens,
	}
	if run.RunID == "" {
		run.RunID = events.NewPrefixedID("run_")
	}
	if a.Spec.Instructions != nil {
		run.Instructions = *a.Spec.Instructions
	}
	if in.Model != "" {
		run.Model = in.Model
	}
	if c.models != nil {
		// A run shows the model that answers it: never "gpt-4o" where the offline model does.
		run.Model = c.models.Answering(run.Model)
	}
	if in.Instructions != nil {
		run.Instructions = *in.Instructions
	}
	if in.AdditionalInstructions != "" {
		run.Instructions = strings.TrimSpace(run.Instructions + "\n\n" + in.AdditionalInstructions)
	}
	if in.ToolsSet {
		run.Tools = in.Tools
	}
	if len(in.ResponseFormat) > 0 {
		run.ResponseFormat = in.ResponseFormat
	}
	if in.Temperature != nil {
		run.Temperature = in.Temperature
	}
	if in.TopP != nil {
		run.TopP = in.TopP
	}
	if in.ParallelToolCalls != nil {
		run.ParallelToolCalls = *in.ParallelToolCalls
	}
	if in.Truncation != nil {
		run.Truncation = *in.Truncation
	}
	if in.ReasoningEffort != "" {
		run.ReasoningEffort = in.ReasoningEffort
	}
	run.ExpiresAt = c.store.Now().Add(c.runTimeout).UTC()
	if err := validateRun(run); err != nil {
		return run, err
	}
	return run, c.assistants.checkSandbox(run.Tools)
}

// validateNewRun bounds what a request sets of a run, before the run copies its assistant's settings.
func validateNewRun(in NewRun) error {
	if err := checkChars("model", in.Model, maxModelChars); err != nil {
		return err
	}
	if in.Instructions != nil {
		if err := checkChars("instructions", *in.Instructions, maxInstructionsChars); err != nil {
			return err
		}
	}
	if err := checkChars("additional_instructions", in.AdditionalInstructions, maxInstructionsChars); err != nil {
		return err
	}
	if err := checkCount("additional_messages", len(in.AdditionalMessages), maxMessages); err != nil {
		return err
	}
	for i, m := range in.AdditionalMessages {
		if err := validateMessage(fmt.Sprintf("additional_messages[%d]", i), m); err != nil {
			return err
		}
	}
	if err := checkJSON("tool_choice", in.ToolChoice); err != nil {
		return err
	}
	if err := checkJSON("response_format", in.ResponseFormat); err != nil {
		return err
	}
	return checkReasoningEffort(in.ReasoningEffort)
}

func validateRun(r events.RunCreated) error {
	if err := ValidateTools("tools", r.Tools); err != nil {
		return err
	}
	if err := validateSampling(r.Temperature, r.TopP); err != nil {
		return err
	}
	if err := ValidateMetadata("metadata", r.Metadata); err != nil {
		return err
	}
	if r.MaxPromptTokens != nil && *r.MaxPromptTokens < 1 {
		return errs.InvalidField("max_prompt_tokens", "%d is less than the minimum of 1", *r.MaxPromptTokens)
	}
	if r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 1 {
		return errs.InvalidField("max_completion_tokens", "%d is less than the minimum of 1", *r.MaxCompletionTokens)
	}
	switch r.Truncation.Type {
	case "auto":
		if r.Truncation.LastMessages != nil {
			return errs.InvalidField("truncation_strategy.last_messages", "last_messages is only for the 'last_messages' strategy")
		}
	case "last_messages":
		if r.Truncation.LastMessages == nil {
			return errs.Missing("truncation_strategy.last_messages")
		}
		if *r.Truncation.LastMessages < 1 {
			return errs.InvalidField("truncation_strategy.last_messages", "%d is less than the minimum of 1", *r.Truncation.LastMessages)
		}
	case "":
		return errs.Missing("truncation_strategy.type")
	default:
		return errs.InvalidField("truncation_strategy.type", "invalid value: '%s'. Supported values are: 'auto' and 'last_messages'", r.Truncation.Type)
	}
	if _, err := ToolChoiceOf(r.ToolChoice, r.Tools); err != nil {
		return err
	}
	return ValidateResponseFormat("response_format", r.ResponseFormat)
}

// ToolChoiceOf reads a run's tool_choice (domain/thread's).
var ToolChoiceOf = thread.ToolChoiceOf

// ValidateResponseFormat checks a response_format: "auto", or {"type": "text" | "json_object" | "json_schema"}
// (json_schema with its schema).
func ValidateResponseFormat(field string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "auto" {
			return nil
		}
		return errs.InvalidField(field, "invalid value: '%s'. Expected 'auto' or an object", s)
	}
	var obj struct {
		Type       string          `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return errs.InvalidField(field, "expected 'auto' or an object")
	}
	switch obj.Type {
	case "text", "json_object":
	case "json_schema":
		if len(obj.JSONSchema) == 0 {
			return errs.Missing(field + ".json_schema")
		}
	case "":
		return errs.Missing(field + ".type")
	default:
		return errs.InvalidField(field+".type", "invalid value: '%s'. Supported values are: 'text', 'json_object' and 'json_schema'", obj.Type)
	}
	return nil
}

// updateClientRun runs decide on a run of a thread the actor may see.
func (c *Runs) updateClientRun(ctx context.Context, actor auth.Principal, threadID, runID string, decide func(*Thread, *ThreadRun) ([]events.Event, error)) (eventstore.Appended, error) {
	return c.threads.updateThread(ctx, actor, threadID, func(t *Thread) ([]events.Event, error) {
		r := t.Runs[runID]
		if r == nil {
			return nil, errs.NotFoundf("run", runID)
		}
		return decide(t, r)
	})
}

// Modify replaces a run's metadata.
func (c *Runs) Modify(ctx context.Context, actor auth.Principal, threadID, runID string, metadata map[string]string) (eventstore.Appended, error) {
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return eventstore.Appended{}, err
	}
	res, err := c.updateClientRun(ctx, actor, threadID, runID, func(*Thread, *ThreadRun) ([]events.Event, error) {
		return []events.Event{events.RunModified{RunID: runID, Metadata: maps.Clone(metadata)}}, nil
	})
	return res, err
}

// Cancel asks an active run to stop; the run worker cancels it. Cancelling a run already cancelling is a no-op.
func (c *Runs) Cancel(ctx context.Context, actor auth.Principal, threadID, runID string) (eventstore.Appended, error) {
	res, err := c.updateClientRun(ctx, actor, threadID, runID, func(_ *Thread, r *ThreadRun) ([]events.Event, error) {
		switch r.Status {
		case events.RunStatusQueued, events.RunStatusInProgress, events.RunStatusRequiresAction:
			return []events.Event{events.RunCancelling{RunID: runID}}, nil
		case events.RunStatusCancelling:
			return nil, nil
		}
		return nil, errs.E(errs.Invalid, "Cannot cancel run with status '%s'.", r.Status)
	})
	return res, err
}

// SubmitToolOutputs answers every tool call a run waits for, in one request, and queues the run again. It returns
// what it appended: a stream of the run's progress starts at its first event.
func (c *Runs) SubmitToolOutputs(ctx context.Context, actor auth.Principal, threadID, runID string, outputs []events.ToolOutput) (eventstore.Appended, error) {
	if err := validateToolOutputs(outputs); err != nil {
		return eventstore.Appended{}, err
	}
	return c.updateClientRun(ctx, actor, threadID, runID, func(t *Thread, r *ThreadRun) ([]events.Event, error) {
		if r.Status != events.RunStatusRequiresAction {
			return nil, errs.E(errs.Invalid, "Runs in status %q do not accept tool outputs.", r.Status)
		}
		step := t.WaitingStep(r)
		if step == nil {
			return nil, errs.E(errs.Invalid, "Runs in status %q do not accept tool outputs.", r.Status)
		}
		if err := matchOutputs(step, outputs); err != nil {
			return nil, err
		}
		return []events.Event{events.RunToolOutputsSubmitted{RunID: runID, StepID: step.StepID, Outputs: outputs}}, nil
	})
}

// validateToolOutputs bounds what a client submits: outputs that name a call, each of a bounded size.
func validateToolOutputs(outputs []events.ToolOutput) error {
	if err := checkCount("tool_outputs", len(outputs), maxToolOutputs); err != nil {
		return err
	}
	for i, o := range outputs {
		at := fmt.Sprintf("tool_outputs[%d]", i)
		if o.ToolCallID == "" {
			return errs.Missing(at + ".tool_call_id")
		}
		if err := checkBytes(at+".tool_call_id", o.ToolCallID, maxToolCallIDBytes); err != nil {
			return err
		}
		if err := checkChars(at+".output", o.Output, maxToolOutputChars); err != nil {
			return err
		}
	}
	return nil
}

// matchOutputs checks that the outputs answer exactly the step's calls, each once.
func matchOutputs(step *ThreadStep, outputs []events.ToolOutput) error {
	want := make([]string, 0, len(step.ToolCalls))
	for _, c := range step.ToolCalls {
		want = append(want, c.ID)
	}
	got := make([]string, 0, len(outputs))
	for _, o := range outputs {
		got = append(got, o.ToolCallID)
	}
	sortedWant, sortedGot := slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))
	if !slices.Equal(sortedWant, sortedGot) {
		return errs.InvalidField("tool_outputs", "Expected tool outputs for call_ids %s, got %s", quoteList(want), quoteList(got))
	}
	return nil
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
