package julepapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/workflow"
	"github.com/contrailhq/contrail/projections"
)

// badRequest marks an error Julep answers with a plain 400 rather than a validation 422: a task that does not
// parse (naming the step's path) and an execution's input that its task's input_schema refuses.
type badRequest struct{ error }

func (b badRequest) Unwrap() error { return b.error }

func asBadRequest(err error) error {
	if errs.CodeOf(err) == errs.Invalid {
		return badRequest{err}
	}
	return err
}

// taskOut is Julep's Task: its source's fields, and the object's own.
func taskOut(t julep.Task) map[string]any {
	out := map[string]any{}
	_ = json.Unmarshal(t.Spec.Source, &out)
	for _, k := range []string{"description", "input_schema", "metadata"} {
		if _, ok := out[k]; !ok {
			out[k] = nil
		}
	}
	if _, ok := out["tools"]; !ok {
		out["tools"] = []any{}
	}
	if _, ok := out["inherit_tools"]; !ok {
		out["inherit_tools"] = false
	}
	out["id"] = t.ID
	out["agent_id"] = t.Spec.Agent
	out["created_at"] = jsonTime(t.Created)
	out["updated_at"] = jsonTime(t.Updated)
	return out
}

func (f *Face) createTask(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, _, err := f.requestID(r.Context(), r, raw)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Tasks.Create(r.Context(), principal(r), id, chi.URLParam(r, "agent_id"), raw)
	if err != nil {
		f.WriteError(w, r, asBadRequest(err))
		return
	}
	created(w, taskOut(res.Object))
}

func (f *Face) createOrUpdateTask(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Tasks.CreateOrUpdate(r.Context(), principal(r), chi.URLParam(r, "agent_id"), chi.URLParam(r, "task_id"), raw)
	if err != nil {
		f.WriteError(w, r, asBadRequest(err))
		return
	}
	ok(w, taskOut(res.Object))
}

func (f *Face) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := f.d.Tasks.Get(r.Context(), principal(r), chi.URLParam(r, "task_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, taskOut(t))
}

func (f *Face) deleteTask(w http.ResponseWriter, r *http.Request) {
	res, err := f.d.Tasks.Delete(r.Context(), principal(r), chi.URLParam(r, "agent_id"), chi.URLParam(r, "task_id"), isRetry(r))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	deleted(w, chi.URLParam(r, "task_id"), res.Object.Updated)
}

func (f *Face) listTasks(w http.ResponseWriter, r *http.Request) {
	agent := chi.URLParam(r, "agent_id")
	if _, err := f.d.Agents.Get(r.Context(), principal(r), agent); err != nil {
		f.WriteError(w, r, err)
		return
	}
	listWhere(f, w, r, projections.JulepTasksModel, principal(r).AccountID+".*", withMetadata, func(t julep.Task) (listItem, any, bool) {
		md, _ := json.Marshal(taskOut(t)["metadata"])
		return listItem{created: t.Created, updated: t.Updated, metadata: md}, taskOut(t), t.Spec.Agent == agent
	})
}

// executionOut is Julep's Execution.
func executionOut(x execution.Execution) map[string]any {
	out := map[string]any{
		"id": x.ID, "task_id": x.Task, "status": x.Status, "input": orNull(x.Input), "output": orNull(x.Output),
		"metadata": orObject(x.Metadata), "created_at": jsonTime(x.Created), "updated_at": jsonTime(x.Updated),
		"transition_count": x.Transitions, "error": nil,
	}
	if x.Error != "" {
		out["error"] = x.Error
	}
	return out
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// executionBody is what a client sends to start an execution.
type executionBody struct {
	Input    json.RawMessage `json:"input"`
	Metadata json.RawMessage `json:"metadata"`
}

func (f *Face) createExecution(w http.ResponseWriter, r *http.Request) {
	var b executionBody
	id, err := f.readJSON(r, true, &b)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Executions.Create(r.Context(), principal(r), id, chi.URLParam(r, "task_id"), notNull(b.Input), notNull(b.Metadata))
	if err != nil {
		f.WriteError(w, r, asBadRequest(err))
		return
	}
	created(w, executionOut(res.Object))
}

func (f *Face) getExecution(w http.ResponseWriter, r *http.Request) {
	x, _, err := f.d.Executions.Get(r.Context(), principal(r), chi.URLParam(r, "execution_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, executionOut(x))
}

// updateBody is PUT /executions/{id}: {status: "cancelled"} or {status: "running", input}.
type updateBody struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input"`
	Reason string          `json:"reason"`
}

func (f *Face) updateExecution(w http.ResponseWriter, r *http.Request) {
	var b updateBody
	if _, err := f.readJSON(r, false, &b); err != nil {
		f.WriteError(w, r, err)
		return
	}
	id := chi.URLParam(r, "execution_id")
	var res execution.Execution
	var err error
	switch b.Status {
	case string(workflow.StatusCancelled):
		var wr written
		wr, err = f.d.Executions.Cancel(r.Context(), principal(r), id, b.Reason)
		res = wr.Object
	case string(workflow.StatusRunning):
		var wr written
		wr, err = f.d.Executions.Resume(r.Context(), principal(r), id, notNull(b.Input))
		res = wr.Object
	default:
		err = errs.InvalidField("status", "status must be cancelled (to cancel) or running (to resume with input), not %q", b.Status)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, executionOut(res))
}

func (f *Face) listExecutions(w http.ResponseWriter, r *http.Request) {
	task := chi.URLParam(r, "task_id")
	if _, err := f.d.Tasks.Get(r.Context(), principal(r), task); err != nil {
		f.WriteError(w, r, err)
		return
	}
	listWhere(f, w, r, projections.ExecutionsModel, principal(r).AccountID+".*", withMetadata, func(x execution.Execution) (listItem, any, bool) {
		return listItem{created: x.Created, updated: x.Updated, metadata: x.Metadata}, executionOut(x), x.Task == task
	})
}

// transitionOut is Julep's Transition.
func transitionOut(execID string, e events.Envelope) (map[string]any, bool) {
	d, ok := e.Event.(events.ExecutionTransitioned)
	if !ok {
		return nil, false
	}
	tr, err := execution.DecodeTransition(d.Transition)
	if err != nil {
		return nil, false
	}
	target := func(t workflow.Target) map[string]any {
		// Julep's scope IDs are strings (UUIDs there); a scope here is its number in the execution.
		return map[string]any{"workflow": t.Workflow, "step": t.Step, "scope_id": strconv.Itoa(t.Scope)}
	}
	out := map[string]any{
		"id": d.ID, "execution_id": execID, "type": tr.Type, "output": tr.Output, "current": target(tr.Current),
		"next": nil, "step_label": nil, "metadata": tr.Metadata, "created_at": jsonTime(e.Time), "updated_at": jsonTime(e.Time),
	}
	if tr.Next != nil {
		out["next"] = target(*tr.Next)
	}
	if tr.StepLabel != "" {
		out["step_label"] = tr.StepLabel
	}
	if out["metadata"] == nil {
		out["metadata"] = map[string]any{}
	}
	return out, true
}

// history reads an execution's events as the log's leader holds them now: for a get, what every write acknowledged
// before the request holds.
func (f *Face) executionHistory(ctx context.Context, r *http.Request) (string, []events.Envelope, events.Version, error) {
	id := chi.URLParam(r, "execution_id")
	if _, _, err := f.d.Executions.Get(ctx, principal(r), id); err != nil {
		return id, nil, events.Version{}, err
	}
	ref := events.Ref{Type: execution.Aggregate, ID: events.JulepAggregateID(principal(r).AccountID, id)}
	hist, v, err := f.d.Store.LoadLatest(ctx, ref)
	if err != nil {
		return id, nil, v, fmt.Errorf("read execution %s: %w", id, err)
	}
	return id, hist, v, nil
}

func (f *Face) listTransitions(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, "scope_id")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, hist, _, err := f.executionHistory(r.Context(), r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	scope := r.URL.Query().Get("scope_id")
	var items []listed
	for _, e := range hist {
		if out, ok := transitionOut(id, e); ok && (scope == "" || out["current"].(map[string]any)["scope_id"] == scope) {
			items = append(items, listed{item: listItem{created: e.Time, updated: e.Time}, out: out})
		}
	}
	// Transitions of one instant keep the log's order (the sort is stable).
	ok(w, p.page(items))
}

func (f *Face) getTransition(w http.ResponseWriter, r *http.Request) {
	id, hist, _, err := f.executionHistory(r.Context(), r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	want := chi.URLParam(r, "transition_id")
	for _, e := range hist {
		if out, found := transitionOut(id, e); found && out["id"] == want {
			ok(w, out)
			return
		}
	}
	f.WriteError(w, r, errs.NotFoundf("transition", want))
}

// statusStream answers an execution's status as server-sent events: the status now, then each change until the
// execution ends (or the client leaves).
func (f *Face) statusStream(w http.ResponseWriter, r *http.Request) {
	f.streamExecution(w, r, func(write func(string, any) bool, v *execution.Execution, e events.Envelope, history bool) bool {
		before := v.Status
		v.FoldView(e)
		if history || (v.Status == before && e.Type != "execution.created") {
			return true
		}
		return write("status", statusOut(*v))
	}, func(write func(string, any) bool, v execution.Execution) bool {
		return write("status", statusOut(v))
	})
}

func statusOut(v execution.Execution) map[string]any {
	out := map[string]any{"execution_id": v.ID, "status": v.Status, "updated_at": jsonTime(v.Updated),
		"transition_count": v.Transitions, "error": nil, "metadata": orObject(v.Metadata)}
	if v.Error != "" {
		out["error"] = v.Error
	}
	return out
}

// transitionsStream answers an execution's transitions as server-sent events: those so far, then each new one
// until the execution ends (or the client leaves).
func (f *Face) transitionsStream(w http.ResponseWriter, r *http.Request) {
	f.streamExecution(w, r, func(write func(string, any) bool, v *execution.Execution, e events.Envelope, _ bool) bool {
		v.FoldView(e)
		if out, found := transitionOut(v.ID, e); found {
			return write("transition", map[string]any{"transition": out})
		}
		return true
	}, nil)
}

// streamExecution writes an execution's events as server-sent events: its history, then what the log appends to it
// from the sequence the history ended at, so that nothing falls between the two. each handles one event (history
// says it is from the history); now, when set, writes once after the history. The stream ends when the execution
// does.
func (f *Face) streamExecution(w http.ResponseWriter, r *http.Request,
	each func(write func(string, any) bool, v *execution.Execution, e events.Envelope, history bool) bool,
	now func(write func(string, any) bool, v execution.Execution) bool) {
	ctx := r.Context()
	_, hist, ver, err := f.executionHistory(ctx, r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	sse := httpapi.StartSSE(w)
	write := sse.Send
	var v execution.Execution
	for _, e := range hist {
		if !each(write, &v, e, now != nil) {
			return
		}
	}
	if now != nil && !now(write, v) {
		return
	}
	if v.Status.Terminal() {
		return
	}
	ref := events.Ref{Type: execution.Aggregate, ID: events.JulepAggregateID(principal(r).AccountID, v.ID)}
	for e, err := range f.d.Store.FollowAggregate(ctx, ref, ver.Seq+1) {
		if err != nil {
			if !errors.Is(err, context.Canceled) && ctx.Err() == nil {
				f.d.Logger.Warn("follow an execution", "execution", v.ID, "err", err)
			}
			return
		}
		if !each(write, &v, e, false) || v.Status.Terminal() {
			return
		}
	}
}

// written is what a command on an execution returns.
type written = commands.Written[execution.Execution]
