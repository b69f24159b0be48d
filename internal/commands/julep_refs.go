package commands

import (
	"context"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/workflow"
)

// julepRefs checks what a Julep tool names: a system tool's resource_id must be an agent or a user of the caller's
// account, refused as an ID that names nothing is otherwise. (The operation checks again when it runs; this is so
// that an agent, a chat or a task never holds a reference to another account's object.)
type julepRefs struct {
	agents *JulepAgents
	users  *JulepUsers
}

// tool checks the reference t makes, naming field.resource_id ("tools[0].system.resource_id").
func (r julepRefs) tool(ctx context.Context, actor auth.Principal, field string, t events.JulepTool) error {
	if t.Type != julepchat.ToolSystem || t.System == nil || t.System.ResourceID == "" {
		return nil
	}
	at := field + ".system.resource_id"
	id := t.System.ResourceID
	var err error
	switch t.System.Resource {
	case "agent":
		if err = ids.CheckUUID(at, id); err == nil {
			_, err = r.agents.Get(ctx, actor, id)
		}
	case "user":
		if r.users == nil {
			return nil
		}
		if err = ids.CheckUUID(at, id); err == nil {
			_, err = r.users.Get(ctx, actor, id)
		}
	default:
		return nil
	}
	if errs.CodeOf(err) == errs.NotFound {
		e := errs.E(errs.NotFound, "%s: no %s %s of yours", at, t.System.Resource, id)
		e.Field = at
		return e
	}
	return err
}

// checkTaskTools checks every tool a task defines (its own and its prompt steps' inline ones) as an agent's tool
// is checked when it is added, and the references they make: a task is refused when it is made, not when it runs.
func checkTaskTools(ctx context.Context, actor auth.Principal, t *workflow.Task, hosts apicall.Hosts, refs julepRefs) error {
	for _, d := range t.DefinedTools() {
		tool, err := julepchat.TaskTool(d.Tool)
		if err != nil {
			return errs.InvalidField(d.Path, "%s is not a tool definition: %v", d.Path, err)
		}
		if err := julepchat.CheckTool(d.Path, tool, hosts); err != nil {
			return err
		}
		if err := refs.tool(ctx, actor, d.Path, tool); err != nil {
			return err
		}
	}
	return nil
}
