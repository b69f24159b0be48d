package julep

import (
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// TaskAggregate is the aggregate type of tasks in the log.
const TaskAggregate = "task"

// Task is a task as it stands: its agent and source (parsed by internal/workflow where it is used).
type Task struct {
	Object
	Spec events.TaskSpec `json:"spec"`
}

// TaskState is the task aggregate rebuilt from its events.
type TaskState struct{ Task }

// Apply folds one event: the only fold of task events.
func (s *TaskState) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.TaskCreated:
		s.Task = Task{Spec: d.Spec}
		s.born(e)
	case events.TaskUpdated:
		s.Spec, s.Updated = d.Spec, e.Time
	case events.TaskDeleted:
		s.Deleted, s.Updated = true, e.Time
	}
}

const taskKind = "task"

// CreateTask makes a task at id (derived from the request: the same request again appends nothing).
func CreateTask(s *TaskState, account string, spec events.TaskSpec) ([]events.Event, error) {
	return create(&s.Object, account, taskKind, events.TaskCreated{Spec: spec})
}

// CreateOrUpdateTask is POST /agents/{agent_id}/tasks/{task_id}: a new task, or the caller's task replaced. A task
// stays with the agent it was made for.
func CreateOrUpdateTask(s *TaskState, account string, spec events.TaskSpec) ([]events.Event, error) {
	if s.Owned(account) && s.Spec.Agent != spec.Agent {
		return nil, errs.E(errs.Conflict, "task %s belongs to agent %s, not %s", s.ID, s.Spec.Agent, spec.Agent)
	}
	return createOrUpdate(&s.Object, account, taskKind, events.TaskCreated{Spec: spec}, events.TaskUpdated{Spec: spec})
}

// DeleteTask deletes the caller's task (retry: the same client's delete again, which finds it deleted).
func DeleteTask(s *TaskState, account, id string, retry bool) ([]events.Event, error) {
	return remove(&s.Object, account, taskKind, id, retry, events.TaskDeleted{})
}
