package queries

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/livejoin"
	"github.com/contrailhq/contrail/internal/llm"
)

// Agents is the handler of queries and agents' steps. A query posted with its dispatch (to an idle session) or
// dispatched to an agent gets what the agent's kind needs: the router ranks the account's agents (route), a
// standalone agent is asked over HTTP (standalone), and a Code Shot agent or the front agent takes its next step
// (execute), which then goes on from every step recorded on its path. A query posted without its dispatch is the
// session runner's (turn). One consumer serves them all: with one each, every event went to each of them and most
// only acknowledged it, which cost each query deliveries that did nothing. Its consumer was named "codeshot" when it
// served the Code Shot executor alone, and takes over from it (Formerly); the others' are retired (Retired).
func (h *Handlers) Agents() runtime.Handler {
	return runtime.Handler{
		Name:        "agents",
		Formerly:    "codeshot",
		EventTypes:  []string{"session.message_posted", "session.query_dispatched", "session.agent_step", "session.routed"},
		Handle:      h.agentStep,
		Concurrency: h.cfg.Concurrency,
		AckWait:     h.cfg.AckWait,
		// Its steps call models and agents: one event at a time per worker, so they go to a free worker.
		Prefetch: 1,
	}
}

// Retired names the handlers that Agents took over: their consumers are deleted when the handlers start, once what
// they still hold has been handed to Agents. The session runner's consumer took every post until posts to an idle
// session carried their dispatch.
func Retired() []string { return []string{"router", "standalone", "session-runner"} }

// agentStep hands an event to the reaction of its agent's kind.
func (h *Handlers) agentStep(ctx context.Context, e events.Envelope) error {
	d, ok := session.DispatchOf(e)
	if _, posted := e.Event.(events.SessionMessagePosted); posted && !ok {
		return h.turn(ctx, e)
	}
	var err error
	switch {
	case ok && d.Kind == session.KindRouter:
		err = h.route(ctx, e)
	case ok && d.Kind == session.KindStandalone:
		err = h.standalone(ctx, e)
	default:
		err = h.execute(ctx, e)
	}
	if err != nil {
		return err
	}
	// Once more, for a delivery handed over again after its answer was appended: the dispatch that followed the
	// answer may not have been. When a query is in flight this reads the held session and does nothing.
	return h.dispatchNext(ctx, e, e.Sequence)
}

// trigger is which path an event moves on, and how: every state of a path is moved on by exactly one event (the
// last one at the path, or the answer of the child it waits for), so two events never make the same step twice.
type trigger struct {
	replyID string
	path    string
	// index is the step index the event recorded at path (-1: the path's dispatch); child is the child path whose
	// answer the event is (then path is its parent).
	index int
	child string
}

func triggerOf(e events.Envelope) (trigger, bool) {
	if d, ok := session.DispatchOf(e); ok {
		path := d.Path
		if path == "" {
			path = d.AgentHandle
		}
		return trigger{replyID: d.ReplyID, path: path, index: -1}, true
	}
	switch d := e.Event.(type) {
	case events.SessionAgentStep:
		if (d.Kind == session.StepAnswer || d.Kind == session.StepFailed) && parentOf(d.Path) != "" {
			return trigger{replyID: d.ReplyID, path: parentOf(d.Path), child: d.Path}, true
		}
		return trigger{replyID: d.ReplyID, path: d.Path, index: d.Index}, true
	case events.SessionRouted:
		return trigger{replyID: d.ReplyID, path: parentOf(d.Path), child: d.Path}, true
	}
	return trigger{}, false
}

func parentOf(path string) string {
	p := session.Path{Name: path}
	return p.Parent()
}

// execute is the Code Shot executor's reaction (see Agents). It reacts to a query dispatched to a Code Shot agent (or
// to the front agent) and to every step recorded on such a path, works out the path's next step (internal/
// codeshot/loop), does it — one model call, one func call, or asking another agent by opening a child path — and
// records what came of it. When a child path answers, it records the answer as the asking path's next step.
func (h *Handlers) execute(ctx context.Context, e events.Envelope) error {
	tr, ok := triggerOf(e)
	if !ok || tr.path == "" {
		return nil
	}
	snap, ok, err := h.read(ctx, e, tr.replyID, tr.path, true)
	if err != nil || !ok {
		return err
	}
	kind := snap.path.Dispatch.Kind
	if kind != session.KindCodeShot && kind != session.KindFront {
		return nil // the router's or a standalone agent's: another handler's
	}
	if snap.answered {
		// Answered but not closed (the node died between the two appends): close it now.
		if tr.child == "" && tr.index == len(snap.path.Steps)-1 {
			return h.update(ctx, e, actorOf(snap.path.Dispatch.AgentID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
				o, _ := p.Answered()
				return session.Close(s, q, p, o)
			}, tr.replyID, tr.path)
		}
		return nil
	}
	if kind == session.KindFront {
		return h.front(ctx, e, tr, snap)
	}
	if !isHead(tr, snap) {
		return nil // a later event moves this path on
	}
	return h.codeShotStep(ctx, e, tr, snap)
}

// isHead reports whether the event is the one that moves a Code Shot path on from where it stands.
func isHead(tr trigger, snap snapshot) bool {
	steps := snap.path.Steps
	if tr.child == "" {
		return tr.index == len(steps)-1
	}
	last := snap.path.Last()
	return last.Kind == session.StepAskAgent && session.ChildPath(&snap.path, last.Name, last.Index) == tr.child
}

// codeShotStep does a Code Shot path's next step.
func (h *Handlers) codeShotStep(ctx context.Context, e events.Envelope, tr trigger, snap snapshot) error {
	from := len(snap.path.Steps)
	info, spec, funcURL, err := h.codeShotAgent(ctx, snap)
	if err != nil {
		if !unusable(err) {
			return err
		}
		return h.record(ctx, e, snap, from, failedWith(err, readable(snap.path.Dispatch.AgentHandle, err, h.cfg.StepTimeout)))
	}
	act := loop.Next(spec.Handle, snap.path.Steps, h.cfg.MaxCalls)
	switch act.Kind {
	case loop.Wait:
		return nil
	case loop.Fail:
		return h.record(ctx, e, snap, from, failed(act.Text))
	case loop.Model:
		var history []string
		if info.Conversational || info.Builtin() {
			history = agents.Exchanges(snap.history)
		}
		req := loop.Request(spec, snap.query.TextAt(&snap.path), history, snap.path.Steps)
		var onDelta func(llm.Delta)
		var stream *livejoin.Joiner
		if streams(snap, h.parentKind(ctx, e, snap)) {
			stream = h.live(snap)
			onDelta = loop.AnswerStreamer(stream.Write)
		}
		sctx, cancel := h.stepContext(ctx)
		resp, err := h.cfg.Models.Complete(sctx, req, onDelta)
		cancel()
		stream.Flush()
		if err != nil {
			if stopping(ctx) {
				return ctx.Err() // handed back: the step is made again after the restart, or on another node
			}
			return h.record(ctx, e, snap, from, failedWith(err, fmt.Sprintf("agent %s: the model failed: %s", spec.Handle, readableErr(err))))
		}
		return h.record(ctx, e, snap, from, loop.Steps(spec.Handle, resp.Text, act.Call)...)
	case loop.CallFunc:
		if funcURL == "" {
			return h.record(ctx, e, snap, from, failed(fmt.Sprintf("agent %s asked for func %s, but no func can be called here", spec.Handle, act.Name)))
		}
		key := loop.Key(snap.query.ReplyID, snap.path.Name, act.Index)
		cl, err := h.claims(ctx, snap, info)
		if err != nil {
			return err
		}
		sctx, cancel := h.stepContext(ctx)
		m, err := h.cfg.Client.CallFunc(agentproto.WithIdempotencyKey(sctx, key), funcURL, act.Name, agentproto.Message{Text: act.Text}, cl)
		cancel()
		if err != nil {
			if stopping(ctx) {
				return ctx.Err()
			}
			return h.record(ctx, e, snap, from, failedWith(err, fmt.Sprintf("agent %s: func %s failed: %s", spec.Handle, act.Name, readableErr(err))))
		}
		embeds, err := h.cfg.Embeds.Keep(ctx, snap.account, m.Embeds)
		if err != nil {
			if errs.CodeOf(err) == errs.Internal {
				return err
			}
			return h.record(ctx, e, snap, from, failed(fmt.Sprintf("agent %s: func %s answered with an embed that cannot be kept: %s", spec.Handle, act.Name, errs.MessageOf(err))))
		}
		return h.record(ctx, e, snap, from, events.SessionAgentStep{Kind: session.StepFuncSays, Name: act.Name, Text: m.Text, Embeds: embeds})
	case loop.AskAgent:
		child := session.ChildPath(&snap.path, act.Name, act.Index)
		if c, ok := snap.children[child]; ok {
			if _, done := c.Answered(); !done {
				return nil // asked; its answer moves this path on
			}
			return h.update(ctx, e, actorOf(info.ID), func(s *session.State, q *session.Query, _ *session.Path) []events.Event {
				cp, ok := q.Paths[child]
				if !ok {
					return nil
				}
				o, _ := cp.Answered()
				return session.Close(s, q, cp, o)
			}, tr.replyID, tr.path)
		}
		if err := session.CheckDelegation(&snap.path, act.Name, h.cfg.MaxDepth); err != nil {
			return h.record(ctx, e, snap, from, failed(fmt.Sprintf("agent %s: asking agent %s failed: %v", spec.Handle, act.Name, err)))
		}
		target, err := h.resolve(ctx, snap.account, act.Name)
		if err != nil {
			if !unusable(err) && errs.CodeOf(err) != errs.Invalid {
				return err
			}
			return h.record(ctx, e, snap, from, failed(fmt.Sprintf("agent %s: asking agent %s failed: %s", spec.Handle, act.Name, errs.MessageOf(err))))
		}
		return h.update(ctx, e, actorOf(info.ID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
			return session.Delegate(s, q, p, child, target, act.Text)
		}, tr.replyID, tr.path)
	}
	return nil
}

// codeShotAgent is the Code Shot agent working on a path: the front agent planning with a real model, or a
// registered agent as it was when the query was dispatched to it.
func (h *Handlers) codeShotAgent(ctx context.Context, snap snapshot) (agent.Info, loop.Spec, string, error) {
	d := snap.path.Dispatch
	if d.AgentID == agents.FixieID {
		info, _ := h.cfg.Agents.Builtin(agents.FixieID)
		return info, loop.Spec{Handle: info.Handle, BasePrompt: agents.FixieBasePrompt, Examples: agents.FixieFewShots,
			Model: h.cfg.DefaultModel}, "", nil
	}
	info, _, err := h.cfg.Agents.Get(ctx, snap.account, d.AgentID, d.AgentSeq)
	if err != nil {
		return agent.Info{}, loop.Spec{}, "", err
	}
	url := info.FuncURL
	if url == "" {
		url = info.QueryURL
	}
	if url == "" {
		return info, loop.Spec{}, "", errs.E(errs.Unavailable, "agent %s has no URL for its funcs", info.Handle)
	}
	if len(info.FewShots) == 0 {
		return info, loop.Spec{}, "", errs.E(errs.Unavailable, "agent %s has no few-shots: refresh it from its URL", info.Handle)
	}
	model := info.Model
	if model == "" {
		model = h.cfg.DefaultModel
	}
	return info, loop.Spec{Handle: info.Handle, BasePrompt: info.BasePrompt, Examples: info.FewShots, Model: model}, url, nil
}

// resolve finds the agent a path asks for by name, as the session's account may use it.
func (h *Handlers) resolve(ctx context.Context, account, ref string) (session.Target, error) {
	info, seq, err := h.cfg.Agents.Find(ctx, account, "", ref)
	if err != nil {
		return session.Target{}, err
	}
	return h.targetOf(info, seq)
}

// parentKind is the kind of the path that opened the snapshot's path ("" at the top).
func (h *Handlers) parentKind(ctx context.Context, e events.Envelope, snap snapshot) string {
	parent := snap.path.Parent()
	if parent == "" {
		return ""
	}
	kind := ""
	_ = h.cfg.Sessions.Read(ctx, e.AggregateID, e.Sequence, func(s *session.State, _ events.Version) error {
		if _, p, ok := s.Path(snap.query.ReplyID, parent); ok {
			kind = p.Dispatch.Kind
		}
		return nil
	})
	return kind
}

// record records steps at the snapshot's path, numbered from `from`, closing the path if they end it.
func (h *Handlers) record(ctx context.Context, e events.Envelope, snap snapshot, from int, steps ...events.SessionAgentStep) error {
	return h.update(ctx, e, actorOf(snap.path.Dispatch.AgentID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
		return finish(s, q, p, from, steps...)
	}, snap.query.ReplyID, snap.path.Name)
}

func failed(reason string) events.SessionAgentStep {
	return events.SessionAgentStep{Kind: session.StepFailed, Text: reason}
}

// failedWith is a failure step that keeps the kind of its cause (a model server that cannot be reached is
// "unavailable"), so that the query's failure carries it to the client.
func failedWith(cause error, reason string) events.SessionAgentStep {
	st := failed(reason)
	if code := errs.CodeOf(cause); code != errs.Internal {
		st.Code = string(code)
	}
	return st
}

// readableErr is what a failure says of its cause: the message of a coded error (its cause is for the logs), or
// the error itself.
func readableErr(err error) string {
	if errs.As(err) != nil {
		return errs.MessageOf(err)
	}
	return err.Error()
}
