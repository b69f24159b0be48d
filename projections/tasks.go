package projections

import (
	"strings"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
)

// The read models of tasks and executions serve their lists (a get reads the aggregate itself), and the sweeper of
// task timers:
//
//	julep_tasks   <account>.<task aggregate>                  -> julep.Task
//	executions    <account>.<execution aggregate>             -> execution.Execution
//	task_timers   <execution aggregate>                       -> TaskTimers (the sleeps under way)
type (
	JulepTasks     struct{}
	Executions     struct{}
	TaskTimersView struct{}
)

// Names of the task read models.
const (
	JulepTasksModel = "julep_tasks"
	ExecutionsModel = "executions"
	TaskTimersModel = "task_timers"
)

// Name implements Projection.
func (JulepTasks) Name() string { return JulepTasksModel }

// EventTypes implements Projection.
func (JulepTasks) EventTypes() []string { return []string{julep.TaskAggregate + ".*"} }

// Apply implements Projection.
func (JulepTasks) Apply(tx *Tx, e events.Envelope) error {
	return foldObject(tx, OwnedKey(e.Account, e.AggregateID), e, func(s *julep.TaskState) (any, *julep.Object) {
		return &s.Task, &s.Object
	})
}

// Name implements Projection.
func (Executions) Name() string { return ExecutionsModel }

// EventTypes implements Projection.
func (Executions) EventTypes() []string {
	return []string{"execution.created", "execution.transitioned"}
}

// Apply implements Projection: the domain's view fold, without the task.
func (Executions) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	var v execution.Execution
	if _, created := e.Event.(events.ExecutionCreated); !created {
		if ok, err := tx.Get(key, &v); err != nil || !ok {
			return err
		}
	}
	v.FoldView(e)
	v.Timers = nil // task_timers keeps them
	return tx.Put(key, v)
}

// TaskTimers is an execution's sleeps under way: when each (by effect key) is due.
type TaskTimers map[string]time.Time

// Name implements Projection.
func (TaskTimersView) Name() string { return TaskTimersModel }

// EventTypes implements Projection.
func (TaskTimersView) EventTypes() []string {
	return []string{"execution.transitioned", "execution.effect_requested"}
}

// Apply implements Projection: the domain's view fold says which sleeps are under way after the event; an
// execution with none has no document.
func (TaskTimersView) Apply(tx *Tx, e events.Envelope) error {
	key := e.AggregateID
	var v execution.Execution
	ok, err := tx.Get(key, &v.Timers)
	if err != nil {
		return err
	}
	if !ok {
		if d, requested := e.Event.(events.ExecutionEffectRequested); !requested || !strings.Contains(string(d.Effect), `"timer"`) {
			return nil // no sleep under way, and none asked for
		}
	}
	v.Account = e.Account
	v.FoldView(e)
	if len(v.Timers) == 0 {
		if ok {
			return tx.Delete(key)
		}
		return nil
	}
	return tx.Put(key, v.Timers)
}
