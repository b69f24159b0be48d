package commands

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/workflow"
)

// The limits of tasks and executions (docs/limits.md): an execution's first event copies the task's source and
// holds the input, and both must fit one event.
const (
	maxTaskSource     = 256 << 10
	maxExecutionInput = 256 << 10
)

// TaskRepo and ExecutionRepo are the node's repositories of tasks and executions.
type (
	TaskRepo      = eventstore.Repo[julep.TaskState, *julep.TaskState]
	ExecutionRepo = eventstore.Repo[execution.State, *execution.State]
)

// JulepTasks are the commands on Julep's tasks.
type JulepTasks struct {
	repo   *TaskRepo
	agents *JulepAgents
	users  *JulepUsers
	hosts  apicall.Hosts
}

// NewJulepTasks returns the task commands; a task's agent must be one of the account's agents, its tools are
// checked as an agent's are (api_call tools may call only the hosts given; a system tool may name only the
// account's agents and users).
func NewJulepTasks(repo *TaskRepo, agents *JulepAgents, users *JulepUsers, hosts apicall.Hosts) *JulepTasks {
	return &JulepTasks{repo: repo, agents: agents, users: users, hosts: hosts}
}

// source checks a task as a client sent it (JSON or YAML) and returns what is stored: its JSON object.
func (c *JulepTasks) source(ctx context.Context, actor auth.Principal, src []byte) (json.RawMessage, error) {
	if len(src) > maxTaskSource {
		return nil, errs.E(errs.TooLarge, "the task is %d bytes; a task holds at most %d", len(src), maxTaskSource)
	}
	t, raw, err := workflow.ParseSource(src)
	if err != nil {
		return nil, err
	}
	if err := checkTaskTools(ctx, actor, t, c.hosts, julepRefs{agents: c.agents, users: c.users}); err != nil {
		return nil, err
	}
	return raw, nil
}

// Create makes a task of one of the caller's agents; its ID derives from request.
func (c *JulepTasks) Create(ctx context.Context, actor auth.Principal, request, agent string, src []byte) (Written[julep.Task], error) {
	spec, err := c.spec(ctx, actor, agent, src)
	if err != nil {
		return Written[julep.Task]{}, err
	}
	id := events.DeriveUUID(request, "task")
	return c.update(ctx, actor, id, "create task", func(s *julep.TaskState) ([]events.Event, error) {
		return julep.CreateTask(s, actor.AccountID, spec)
	})
}

// CreateOrUpdate is POST /agents/{agent_id}/tasks/{task_id}.
func (c *JulepTasks) CreateOrUpdate(ctx context.Context, actor auth.Principal, agent, id string, src []byte) (Written[julep.Task], error) {
	if err := ids.CheckUUID("task_id", id); err != nil {
		return Written[julep.Task]{}, err
	}
	spec, err := c.spec(ctx, actor, agent, src)
	if err != nil {
		return Written[julep.Task]{}, err
	}
	return c.update(ctx, actor, id, "create or update task", func(s *julep.TaskState) ([]events.Event, error) {
		return julep.CreateOrUpdateTask(s, actor.AccountID, spec)
	})
}

// Delete deletes one of the caller's tasks; its executions stay.
func (c *JulepTasks) Delete(ctx context.Context, actor auth.Principal, agent, id string, retry bool) (Written[julep.Task], error) {
	return c.update(ctx, actor, id, "delete task", func(s *julep.TaskState) ([]events.Event, error) {
		if s.Owned(actor.AccountID) && s.Spec.Agent != agent {
			return nil, errs.NotFoundf("task", id)
		}
		return julep.DeleteTask(s, actor.AccountID, id, retry)
	})
}

func (c *JulepTasks) spec(ctx context.Context, actor auth.Principal, agent string, src []byte) (events.TaskSpec, error) {
	raw, err := c.source(ctx, actor, src)
	if err != nil {
		return events.TaskSpec{}, err
	}
	if _, err := c.agents.Get(ctx, actor, agent); err != nil {
		return events.TaskSpec{}, err
	}
	return events.TaskSpec{Agent: agent, Source: raw}, nil
}

// Get returns the caller's task as the log holds it now.
func (c *JulepTasks) Get(ctx context.Context, actor auth.Principal, id string) (julep.Task, error) {
	return readJulep(ctx, c.repo, actor, id, "task", func(s *julep.TaskState) (julep.Task, bool) {
		return s.Task, s.Owned(actor.AccountID)
	})
}

func (c *JulepTasks) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*julep.TaskState) ([]events.Event, error)) (Written[julep.Task], error) {
	return writeJulep(ctx, c.repo, actor, id, "task", what, decide, func(s *julep.TaskState) julep.Task { return s.Task })
}

// Executions are the commands on executions of tasks.
type Executions struct {
	repo  *ExecutionRepo
	tasks *JulepTasks
}

// NewExecutions returns the execution commands.
func NewExecutions(repo *ExecutionRepo, tasks *JulepTasks) *Executions {
	return &Executions{repo: repo, tasks: tasks}
}

// Repo is the repository the commands decide on (the engine shares it).
func (c *Executions) Repo() *ExecutionRepo { return c.repo }

// Create starts an execution of one of the caller's tasks; its ID derives from request. The input must match the
// task's input_schema: a 400 naming the field otherwise, and nothing is stored.
func (c *Executions) Create(ctx context.Context, actor auth.Principal, request, task string, input, metadata json.RawMessage) (Written[execution.Execution], error) {
	if len(input) > maxExecutionInput {
		return Written[execution.Execution]{}, errs.E(errs.TooLarge, "the input is %d bytes of JSON; an execution takes at most %d", len(input), maxExecutionInput)
	}
	if err := checkJSONObject("metadata", metadata); err != nil {
		return Written[execution.Execution]{}, err
	}
	t, err := c.tasks.Get(ctx, actor, task)
	if err != nil {
		return Written[execution.Execution]{}, err
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	id := events.DeriveUUID(request, "execution")
	in := execution.NewExecution{ID: id, Task: t.Spec, TaskID: t.ID, Input: input, Metadata: metadata}
	now := c.repo.Store().Now()
	return c.update(ctx, actor, id, "create execution", func(s *execution.State) ([]events.Event, error) {
		return execution.Start(s, actor.AccountID, in, now)
	})
}

// Cancel cancels one of the caller's executions.
func (c *Executions) Cancel(ctx context.Context, actor auth.Principal, id, reason string) (Written[execution.Execution], error) {
	now := c.repo.Store().Now()
	return c.update(ctx, actor, id, "cancel execution", func(s *execution.State) ([]events.Event, error) {
		return execution.Cancel(s, actor.AccountID, id, reason, execution.Env{Now: now})
	})
}

// Resume answers the oldest step of one of the caller's executions that waits for input.
func (c *Executions) Resume(ctx context.Context, actor auth.Principal, id string, input json.RawMessage) (Written[execution.Execution], error) {
	if len(input) > maxExecutionInput {
		return Written[execution.Execution]{}, errs.E(errs.TooLarge, "the input is %d bytes of JSON; an execution takes at most %d", len(input), maxExecutionInput)
	}
	now := c.repo.Store().Now()
	return c.update(ctx, actor, id, "resume execution", func(s *execution.State) ([]events.Event, error) {
		return execution.Resume(s, actor.AccountID, id, input, execution.Env{Now: now})
	})
}

// Get returns one of the caller's executions as the log holds it now, and the stream sequence of its last event.
func (c *Executions) Get(ctx context.Context, actor auth.Principal, id string) (execution.Execution, uint64, error) {
	var out execution.Execution
	var seq uint64
	found := false
	if !ids.IsUUID(id) {
		return out, 0, errs.NotFoundf("execution", id)
	}
	err := c.repo.Read(ctx, events.JulepAggregateID(actor.AccountID, id), eventstore.Fresh, func(s *execution.State, v events.Version) error {
		out, seq, found = s.Execution, v.Seq, s.Owned(actor.AccountID)
		return nil
	})
	if err != nil {
		return out, 0, fmt.Errorf("read execution %s: %w", id, err)
	}
	if !found {
		return execution.Execution{}, 0, errs.NotFoundf("execution", id)
	}
	return out, seq, nil
}

func (c *Executions) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*execution.State) ([]events.Event, error)) (Written[execution.Execution], error) {
	return writeJulep(ctx, c.repo, actor, id, "execution", what, decide, func(s *execution.State) execution.Execution { return s.Execution })
}
