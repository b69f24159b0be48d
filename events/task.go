package events

import "encoding/json"

// Julep's tasks (seed 004) and their executions. A task ("task") is a workflow an agent owns: its source is kept as
// the client sent it, normalised to a JSON object, and parsed by internal/workflow wherever it is used (parsing is
// deterministic, so every node reads the same task from the same source). An execution ("execution") is one run of a
// task with an input: it copies the task's source when it is created, so that changing the task does not change
// executions under way, and every transition it goes through is an event. Like Julep's other objects, both have
// UUIDs scoped by account: their aggregate is JulepAggregateID(account, uuid).

// TaskSpec is a task as it is stored: whose it is and its source.
type TaskSpec struct {
	// Agent is the UUID of the Julep agent that owns the task.
	Agent string `json:"agent"`
	// Source is the task's JSON object: name, description, main, the other workflows, input_schema, tools,
	// inherit_tools, metadata.
	Source json.RawMessage `json:"source"`
}

// TaskCreated makes a task.
type TaskCreated struct {
	Spec TaskSpec `json:"spec"`
}

func (TaskCreated) EventType() string { return "task.created" }

// TaskUpdated replaces a task's source (create-or-update at its ID). Executions already made keep theirs.
type TaskUpdated struct {
	Spec TaskSpec `json:"spec"`
}

func (TaskUpdated) EventType() string { return "task.updated" }

// TaskDeleted deletes a task; its executions stay readable.
type TaskDeleted struct{}

func (TaskDeleted) EventType() string { return "task.deleted" }

// ExecutionCreated makes an execution of a task with an input (already checked against the task's input_schema).
// The execution's first transition (init) follows in the same append.
type ExecutionCreated struct {
	// Task is the task's UUID, Agent its agent's.
	Task  string `json:"task"`
	Agent string `json:"agent"`
	// Source is the task's source when the execution was made.
	Source   json.RawMessage `json:"source"`
	Input    json.RawMessage `json:"input"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

func (ExecutionCreated) EventType() string { return "execution.created" }

// ExecutionTransitioned is one transition of an execution (Julep's init, step, wait, resume, init_branch,
// finish_branch, finish, error, cancelled). Transition is internal/workflow's Transition as JSON: the fold of the
// task language owns its shape. Status is the execution's status once the transition is folded, so that readers
// that do not fold the task (read models, a status stream) know it.
type ExecutionTransitioned struct {
	// ID is the transition's UUID.
	ID         string          `json:"id"`
	Transition json.RawMessage `json:"transition"`
	Status     string          `json:"status"`
}

func (ExecutionTransitioned) EventType() string { return "execution.transitioned" }

// ExecutionEffectRequested records that the engine asked for a step's side effect (a model call, a tool call, a
// timer): the effect is performed once, by whichever node takes this event, and its result comes back as the
// step's transition. Effect is internal/workflow's Effect as JSON.
type ExecutionEffectRequested struct {
	Key    string          `json:"key"`
	Effect json.RawMessage `json:"effect"`
}

func (ExecutionEffectRequested) EventType() string { return "execution.effect_requested" }

func taskEvents() []Event {
	return []Event{
		TaskCreated{}, TaskUpdated{}, TaskDeleted{},
		ExecutionCreated{}, ExecutionTransitioned{}, ExecutionEffectRequested{},
	}
}
