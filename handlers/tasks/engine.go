// Package tasks is the task engine: the consumers of the log that run Julep task executions.
//
//   - The stepper (Engine.Stepper) reacts to each transition of an execution. On the delivery of the execution's last
//     transition it decides, on the execution as of that transition, what comes next (domain/execution.Advance):
//     the transitions of the steps that need nothing from outside (evaluate, if, foreach, a branch's start and end,
//     a wait for input...), or, when every frame waits on one, a request for each side effect.
//   - The effect runner (Engine.Effects) reacts to each effect requested: it calls the model for a prompt step, runs
//     a system or api_call tool (with an Idempotency-Key derived from the execution and the step), or sets a durable
//     timer for a sleep, and appends the step's result as its transition. Effects of one execution (the branches of
//     a map-reduce) are separate events, so they spread over the nodes.
//   - The timers (Engine.RunTimers) turn JetStream message schedules that fire into the sleeping step's transition,
//     and sweep for timers that are due and did not fire.
//
// Nothing lives only in memory: a node that dies mid-step leaves the event it was handling unacknowledged, and
// whichever node takes it again decides on the log. Every append expects the version it decided on, so two nodes
// never both record a step. It imports events, the domain packages, llm and apicall; never a face.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/expr"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/workflow"
)

// Executions is the repository of executions the engine decides on.
type Executions = eventstore.Repo[execution.State, *execution.State]

// Agents reads an account's Julep agents (a task that inherits its agent's tools, the model of its prompts).
type Agents interface {
	JulepAgent(ctx context.Context, account, id string) (julep.Agent, error)
}

// System runs a system tool of a task for account's agent.
type System interface {
	RunSystem(ctx context.Context, account, agent string, d events.JulepSystemDef, args string) (string, error)
}

// Config wires the engine.
type Config struct {
	Executions *Executions
	Agents     Agents
	System     System
	// Models runs prompt steps; DefaultModel is the model of agents that name none.
	Models       llm.Provider
	DefaultModel string
	APICalls     *apicall.Client
	// JS and Names reach the timers stream.
	JS     jetstream.JetStream
	Names  natsx.Names
	Logger *slog.Logger
	// Batch bounds the rounds of decisions one delivery makes (default 1: the engine reacts to each transition and
	// decides the next ones). More lets steps that need nothing from outside be decided one after the other on the
	// state they leave and appended together, each still its own event; measured, it gains little (bench tasks:
	// 6,037 steps/s with 1, 6,296-6,505 with 64), so the default keeps one decision per event.
	Batch int
	// Concurrency is how many events each handler works on at once on this node (default 64).
	Concurrency int
	// AckWait is how long a delivery may go unanswered before another node takes it (default 5s).
	AckWait time.Duration
	// StepTimeout bounds one model call or tool run (default 5m).
	StepTimeout time.Duration
	// Limits bound every execution.
	Limits workflow.Limits
	// SweepEvery is how often the timers' sweeper looks for due timers that did not fire (default 15s).
	SweepEvery time.Duration
}

// Engine is the task engine of one node.
type Engine struct {
	cfg Config
	now func() time.Time
}

// New returns the engine.
func New(cfg Config) *Engine {
	if cfg.Batch <= 0 {
		cfg.Batch = 1
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 64
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 5 * time.Second
	}
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 5 * time.Minute
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = 15 * time.Second
	}
	if cfg.Limits.MaxTransitionBytes == 0 {
		// One transition is one event; its output must leave room for the envelope.
		cfg.Limits.MaxTransitionBytes = 512 << 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Engine{cfg: cfg, now: cfg.Executions.Store().Now}
}

// Stepper is the handler that decides each execution's next transitions.
func (g *Engine) Stepper() runtime.Handler {
	return runtime.Handler{
		Name:        "task-stepper",
		EventTypes:  []string{"execution.transitioned"},
		Handle:      g.step,
		Concurrency: g.cfg.Concurrency,
		AckWait:     g.cfg.AckWait,
	}
}

// Effects is the handler that performs the side effects steps ask for.
func (g *Engine) Effects() runtime.Handler {
	return runtime.Handler{
		Name:        "task-effects",
		EventTypes:  []string{"execution.effect_requested"},
		Handle:      g.perform,
		Concurrency: g.cfg.Concurrency,
		AckWait:     g.cfg.AckWait,
		// A model call is slow: an effect waits for a node with a free worker, not behind a busy one.
		Prefetch: 1,
	}
}

func (g *Engine) env(tools []workflow.Tool) execution.Env {
	return execution.Env{Now: g.now(), AgentTools: tools, Limits: g.cfg.Limits}
}

func meta(e events.Envelope) events.Meta {
	return events.Meta{Account: e.Account, Actor: "system", CorrelationID: e.AggregateID, CausationID: e.ID}
}

// step decides on the delivery of an execution's last transition; the deliveries of earlier ones find a later
// transition in the state and leave the decision to its delivery.
func (g *Engine) step(ctx context.Context, e events.Envelope) error {
	var last bool
	var account, agent string
	var inherit bool
	err := g.cfg.Executions.Read(ctx, e.AggregateID, e.Sequence, func(s *execution.State, _ events.Version) error {
		last = s.Exists && s.LastTransition == e.Sequence && !s.Flow.Status.Terminal()
		account, agent = s.Account, s.Agent
		inherit = s.Task != nil && s.Task.InheritTools
		return nil
	})
	if err != nil || !last {
		return err
	}
	tools, err := g.agentTools(ctx, account, agent, inherit)
	if err != nil {
		return err
	}
	env := g.env(tools)
	_, err = g.cfg.Executions.Update(ctx, e.AggregateID, e.Sequence, meta(e), func(s *execution.State) ([]events.Event, error) {
		if s.LastTransition != e.Sequence {
			return nil, nil // another transition came meanwhile: its delivery decides
		}
		return execution.Advance(ctx, s, env, g.cfg.Batch)
	})
	if err != nil {
		return fmt.Errorf("execution %s: decide: %w", e.AggregateID, err)
	}
	return nil
}

// agentTools are the tools of the task's agent, when the task inherits them.
func (g *Engine) agentTools(ctx context.Context, account, agent string, inherit bool) ([]workflow.Tool, error) {
	if !inherit || g.cfg.Agents == nil {
		return nil, nil
	}
	a, err := g.cfg.Agents.JulepAgent(ctx, account, agent)
	if errs.CodeOf(err) == errs.NotFound {
		return nil, nil // the agent was deleted: the task's own tools remain
	}
	if err != nil {
		return nil, fmt.Errorf("read the tools of agent %s: %w", agent, err)
	}
	out := make([]workflow.Tool, 0, len(a.Tools))
	for _, t := range a.Tools {
		raw, err := json.Marshal(t.Tool)
		if err != nil {
			continue
		}
		var def map[string]any
		if json.Unmarshal(raw, &def) != nil {
			continue
		}
		out = append(out, workflow.Tool{Name: t.Tool.Name, Type: t.Tool.Type, Description: t.Tool.Description, Def: def})
	}
	return out, nil
}

// perform does the effect an event asked for, unless its step has moved on (done already, or the execution ended).
func (g *Engine) perform(ctx context.Context, e events.Envelope) error {
	d, ok := e.Event.(events.ExecutionEffectRequested)
	if !ok {
		return nil
	}
	var ef workflow.Effect
	var pending bool
	var account, agent string
	err := g.cfg.Executions.Read(ctx, e.AggregateID, e.Sequence, func(s *execution.State, _ events.Version) error {
		ef, pending = s.Requested[d.Key]
		account, agent = s.Account, s.Agent
		return nil
	})
	if err != nil || !pending {
		return err
	}
	var r workflow.Result
	switch ef.Kind {
	case workflow.EffectTimer:
		if ef.Until.After(g.now()) {
			return g.schedule(ctx, e.AggregateID, ef)
		}
	case workflow.EffectModel:
		r, err = g.callModel(ctx, e.AggregateID, account, agent, ef)
	case workflow.EffectTool:
		r, err = g.runTool(ctx, e.AggregateID, account, agent, ef)
	default:
		r.Error = fmt.Sprintf("this server does not perform %q effects", ef.Kind)
	}
	if err != nil {
		return err // the platform's own failure (or a stop): tried again, here or on another node
	}
	return g.complete(ctx, e.AggregateID, e.Sequence, meta(e), d.Key, r)
}

// complete records an effect's result as its step's transitions.
func (g *Engine) complete(ctx context.Context, id string, atLeast uint64, m events.Meta, key string, r workflow.Result) error {
	env := g.env(nil)
	_, err := g.cfg.Executions.Update(ctx, id, atLeast, m, func(s *execution.State) ([]events.Event, error) {
		return execution.Complete(ctx, s, key, r, env)
	})
	if err != nil {
		return fmt.Errorf("execution %s: record the result of %s: %w", id, key, err)
	}
	return nil
}

// modelRetries are the waits between tries of a model that is rate limited or unavailable, before the step fails.
var modelRetries = []time.Duration{time.Second, 3 * time.Second}

// maxToolRounds bounds the rounds of tool calls one prompt step that runs its tools may make.
const maxToolRounds = 10

// callModel runs a prompt step. The model is offered the step's tools: functions, system and api_call tools. With
// auto_run_tools the platform runs the system and api_call tools the model calls and asks the model again with
// their results, until it answers without calls; the step's output is that answer. Without it (Julep's default),
// or when the model calls a function tool (the client's), the step's output is the model's answer with its tool
// calls. A model that fails for good (a bad request, a model nobody here runs, still unavailable after the
// retries) fails the step with the reason; a stop of the node leaves it to another.
//
// disable_cache is accepted and has no effect: this server keeps no cache of model answers to bypass.
func (g *Engine) callModel(ctx context.Context, id, account, agent string, ef workflow.Effect) (workflow.Result, error) {
	call := ef.Model
	if call == nil {
		return workflow.Result{Error: "the prompt step has no call"}, nil
	}
	req, offered, err := g.request(ctx, account, agent, call)
	if err != nil {
		if errs.As(err) != nil {
			return workflow.Result{Error: errs.MessageOf(err)}, nil
		}
		return workflow.Result{}, err
	}
	for round := 0; ; round++ {
		resp, failed, err := g.complete1(ctx, req)
		if err != nil || failed != "" {
			return workflow.Result{Error: failed}, err
		}
		if !call.AutoRunTools || len(resp.ToolCalls) == 0 {
			return workflow.Result{Output: chatResponse(resp)}, nil
		}
		if round >= maxToolRounds {
			return workflow.Result{Error: fmt.Sprintf("the model was still calling tools after %d rounds", maxToolRounds)}, nil
		}
		// A function tool is the client's to run: the step ends with the calls, as Julep's does. That is decided
		// before any tool runs, so that no api_call goes out whose result would be thrown away.
		for _, c := range resp.ToolCalls {
			if o, err := julepchat.Find(offered, c.Name); err == nil && !julepchat.Runs(o.Tool) {
				return workflow.Result{Output: chatResponse(resp)}, nil
			}
		}
		next := []llm.Message{{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls}}
		for i, c := range resp.ToolCalls {
			o, err := julepchat.Find(offered, c.Name)
			var out string
			if err != nil {
				out = errs.MessageOf(err)
			} else {
				key := fmt.Sprintf("%s-%d-%d", ef.Key, round, i)
				v, failed, err := g.invoke(ctx, id, account, agent, key, o.Tool, []byte(o.Complete(c.Arguments)))
				if err != nil {
					return workflow.Result{}, err
				}
				if failed != "" {
					out = failed // the model is told, and may try otherwise
				} else if raw, err := json.Marshal(v); err == nil {
					out = string(raw)
				}
			}
			next = append(next, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: out})
		}
		req.Messages = append(req.Messages, next...)
	}
}

// complete1 asks the model once, with retries while it is rate limited or unavailable: its answer, or why it
// failed for good (the step fails with it), or the platform's own failure (ctx).
func (g *Engine) complete1(ctx context.Context, req llm.Request) (llm.Response, string, error) {
	for attempt := 0; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, g.cfg.StepTimeout)
		resp, err := g.cfg.Models.Complete(sctx, req, nil)
		cancel()
		if err == nil {
			return resp, "", nil
		}
		if ctx.Err() != nil {
			return resp, "", ctx.Err()
		}
		transient := errors.Is(err, llm.ErrRateLimited) || errors.Is(err, llm.ErrUnavailable)
		if !transient || attempt >= len(modelRetries) {
			msg := errs.MessageOf(err)
			if errs.As(err) == nil {
				msg = err.Error()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				msg = fmt.Sprintf("the model did not answer within %s", g.cfg.StepTimeout)
			}
			return resp, "the model failed: " + msg, nil
		}
		select {
		case <-ctx.Done():
			return resp, "", ctx.Err()
		case <-time.After(modelRetries[attempt]):
		}
	}
}

// request builds the model request of a prompt step: the step's settings over the agent's model, and the step's
// tools as the model is offered them.
func (g *Engine) request(ctx context.Context, account, agent string, call *workflow.ModelCall) (llm.Request, []julepchat.Offered, error) {
	var req llm.Request
	for i, m := range call.Messages {
		mm, ok := m.(map[string]any)
		if !ok {
			return req, nil, errs.E(errs.Invalid, "message %d of the prompt is not an object", i)
		}
		msg := llm.Message{}
		msg.Role, _ = mm["role"].(string)
		msg.Name, _ = mm["name"].(string)
		switch c := mm["content"].(type) {
		case string:
			msg.Content = c
		case nil:
		default:
			raw, _ := json.Marshal(c)
			msg.Content = string(raw)
		}
		if msg.Role == "" {
			msg.Role = llm.RoleUser
		}
		req.Messages = append(req.Messages, msg)
	}
	st := call.Settings
	model, _ := st["model"].(string)
	if model == "" && g.cfg.Agents != nil {
		a, err := g.cfg.Agents.JulepAgent(ctx, account, agent)
		if err != nil && errs.CodeOf(err) != errs.NotFound {
			return req, nil, err
		}
		model = a.Spec.Model
	}
	if model == "" {
		model = g.cfg.DefaultModel
	}
	req.Model = model
	if v, ok := number(st["temperature"]); ok {
		req.Temperature = &v
	}
	if v, ok := number(st["top_p"]); ok {
		req.TopP = &v
	}
	if v, ok := number(st["max_tokens"]); ok {
		req.MaxTokens = int(v)
	}
	if v, ok := number(st["seed"]); ok {
		n := int64(v)
		req.Seed = &n
	}
	if rf, ok := st["response_format"]; ok && rf != nil {
		req.ResponseFormat, _ = json.Marshal(rf)
	}
	switch s := st["stop"].(type) {
	case string:
		req.Stop = []string{s}
	case []any:
		for _, x := range s {
			if str, ok := x.(string); ok {
				req.Stop = append(req.Stop, str)
			}
		}
	}
	// Every tool the step has is offered, functions, system and api_call tools alike, as a chat offers an agent's;
	// a tool this server cannot run (an integration) was refused when the task was made, or is left out here.
	tools := make([]events.JulepTool, 0, len(call.Tools))
	for _, t := range call.Tools {
		jt, err := julepchat.TaskTool(t)
		if err != nil || (jt.Type != julepchat.ToolFunction && !julepchat.Runs(jt)) {
			continue
		}
		tools = append(tools, jt)
	}
	offered := julepchat.Offer(tools, julepchat.ToolParameters{})
	for _, o := range offered {
		req.Tools = append(req.Tools, o.Model)
	}
	if tc, ok := call.ToolChoice.(string); ok {
		req.ToolChoice = tc
	}
	return req, offered, nil
}

// number reads a setting's number, as expressions give it.
func number(v any) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return expr.AsFloat(v)
}

// chatResponse is a model's answer as a prompt step's output: OpenAI's chat completion shape, which Julep's
// tasks read (_["choices"][0]["message"]["content"]).
func chatResponse(resp llm.Response) map[string]any {
	msg := map[string]any{"role": "assistant", "content": resp.Text}
	if len(resp.ToolCalls) > 0 {
		calls := make([]any, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	finish := resp.FinishReason
	if finish == "" {
		finish = llm.FinishStop
	}
	return map[string]any{
		"model":   resp.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage": map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
			"total_tokens": resp.Usage.TotalTokens},
	}
}

// runTool runs a tool step's system or api_call tool. A tool that fails fails the step with the reason.
func (g *Engine) runTool(ctx context.Context, id, account, agent string, ef workflow.Effect) (workflow.Result, error) {
	call := ef.Tool
	if call == nil {
		return workflow.Result{Error: "the tool step has no call"}, nil
	}
	args, err := json.Marshal(call.Arguments)
	if err != nil {
		return workflow.Result{Error: "the arguments cannot be sent: " + err.Error()}, nil
	}
	t := call.Tool
	t.Name, t.Type = call.Name, call.Type
	tool, err := julepchat.TaskTool(t)
	if err != nil {
		return workflow.Result{Error: fmt.Sprintf("tool %s: the definition does not read: %v", call.Name, err)}, nil
	}
	out, failed, err := g.invoke(ctx, id, account, agent, ef.Key, tool, args)
	if err != nil || failed != "" {
		return workflow.Result{Error: failed}, err
	}
	return workflow.Result{Output: out}, nil
}

// invoke runs a system or api_call tool with args (JSON) for the effect key names: its output, or why it failed
// (the step's or the model's to hear), or the platform's own failure.
func (g *Engine) invoke(ctx context.Context, id, account, agent, key string, tool events.JulepTool, args []byte) (any, string, error) {
	sctx, cancel := context.WithTimeout(ctx, g.cfg.StepTimeout)
	defer cancel()
	var out any
	switch tool.Type {
	case "api_call":
		if tool.APICall == nil || tool.APICall.URL == "" {
			return nil, fmt.Sprintf("tool %s: the api_call definition has no url", tool.Name), nil
		}
		def := *tool.APICall
		if g.cfg.APICalls == nil {
			return nil, "api_call tools are not set up on this server", nil
		}
		// The same step of the same execution always sends the same key, so that a call repeated after a crash
		// (the result was not recorded yet) is one the service can recognise.
		headers := make(map[string]string, len(def.Headers)+1)
		for k, v := range def.Headers {
			headers[k] = v
		}
		headers["Idempotency-Key"] = IdempotencyKey(id, key)
		def.Headers = headers
		res, err := g.cfg.APICalls.Call(sctx, def, args)
		if err != nil {
			return g.toolFailed(ctx, tool.Name, err)
		}
		m := map[string]any{"status_code": res.StatusCode}
		if len(res.JSON) > 0 {
			v, _ := execution.DecodeValue(res.JSON)
			m["json"] = v
		} else {
			m["text"] = res.Text
		}
		out = m
	case "system":
		if tool.System == nil {
			return nil, fmt.Sprintf("tool %s: the system definition is missing", tool.Name), nil
		}
		if g.cfg.System == nil {
			return nil, "system tools are not set up on this server", nil
		}
		text, err := g.cfg.System.RunSystem(sctx, account, agent, *tool.System, string(args))
		if err != nil {
			return g.toolFailed(ctx, tool.Name, err)
		}
		v, err := execution.DecodeValue(json.RawMessage(text))
		if err != nil {
			v = text
		}
		out = v
	default:
		return nil, fmt.Sprintf("tool %s: %s tools are not run by this server (function tools are answered by the client; system and api_call tools run here)", tool.Name, tool.Type), nil
	}
	return out, "", nil
}

func (g *Engine) toolFailed(ctx context.Context, name string, err error) (any, string, error) {
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	msg := errs.MessageOf(err)
	if errs.As(err) == nil {
		msg = err.Error()
	}
	return nil, fmt.Sprintf("tool %s failed: %s", name, msg), nil
}

// IdempotencyKey is the key a step's call out carries: the same for every attempt of that step of that execution.
func IdempotencyKey(execution, effect string) string {
	return execution + "/" + strings.ReplaceAll(effect, "/", "-")
}
