package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/runlive"
	"github.com/contrailhq/contrail/projections"
)

// stream answers a request that asked for "stream": true. It listens to the thread's live subject and watches its
// committed events first, then lets start append (create the run, or submit tool outputs), and then writes the
// run's progress as server-sent events until the run stops (requires_action or an end), closing with "done".
//
// The events come from the log, which is complete and in order; the token deltas come from the live subject, which
// is not: a delta the stream missed is made up from the log when the message is complete. A client that goes away
// stops only its stream; the run goes on.
//
// A stream of a new run follows the log from the run's first event; a stream that continues a run (submitted tool
// outputs) reads the thread from its start, to know the run and its steps as they were.
func (f *Face) stream(w http.ResponseWriter, r *http.Request, threadID, runID string, newRun, withThread bool, start func() (eventstore.Appended, error)) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		f.WriteError(w, r, fmt.Errorf("stream: the response writer cannot flush"))
		return
	}
	if !natsx.ValidToken(threadID) {
		f.WriteError(w, r, errs.NotFoundf("thread", threadID))
		return
	}
	live := make(chan *nats.Msg, 4096)
	sub, err := f.d.NC.ChanSubscribe(f.d.Names.LiveSubject("thread", threadID), live)
	if err != nil {
		f.WriteError(w, r, fmt.Errorf("stream: listen to thread %s: %w", threadID, err))
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	natsx.Registered(r.Context(), f.d.NC)
	// Watched before the append, so that every event after it is in the watch however fast the worker is.
	watch, err := f.d.Store.Watch(r.Context(), events.Ref{Type: "thread", ID: threadID})
	if err != nil {
		f.WriteError(w, r, fmt.Errorf("stream: watch thread %s: %w", threadID, err))
		return
	}
	defer watch.Close()
	appended, err := start()
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	logCh := make(chan logItem, 256)
	from := appended.FirstSeq()
	var after events.Version // the thread's whole history
	if newRun && from > 0 {
		after = events.Version{Count: appended.Events[0].Version - 1, Seq: from - 1}
	}
	go follow(ctx, watch, after, logCh)
	s := newRunStream(threadID, runID, withThread, from, &sseWriter{w: w, f: flusher})
	for !s.finished && s.out.err == nil {
		if len(live) == 0 && len(logCh) == 0 {
			s.out.flush() // nothing more at hand: what was written goes out before the wait
		}
		select {
		case <-ctx.Done():
			return
		case m := <-live:
			var fr runlive.Frame
			if json.Unmarshal(m.Data, &fr) == nil && fr.RunID == runID {
				s.live(fr)
			}
		case it, ok := <-logCh:
			if !ok {
				return
			}
			if it.err != nil {
				f.d.Logger.Warn("stream: follow thread", "thread", threadID, "err", it.err)
				_, obj := errorFor(it.err)
				s.out.event("error", obj)
				s.out.done()
				return
			}
			if it.env.Event != nil {
				s.event(it.env)
			}
		}
	}
	if s.finished {
		s.out.done()
	}
}

// logItem is an event of the log, or why reading the log stopped.
type logItem struct {
	env events.Envelope
	err error
}

// follow sends the thread's events after `after` until ctx ends.
func follow(ctx context.Context, watch *eventstore.Watch, after events.Version, out chan<- logItem) {
	defer close(out)
	for env, err := range watch.Follow(ctx, after) {
		select {
		case out <- logItem{env: env, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// sseWriter writes server-sent events. It flushes when told to, so that events that come together leave in one
// write: a run's dozen events, one write (a syscall, and a read on the client's side) each, cost more than the rest
// of the stream.
type sseWriter struct {
	w       http.ResponseWriter
	f       http.Flusher
	err     error
	pending bool // written since the last flush
}

func (o *sseWriter) event(name string, data any) {
	if o.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		o.err = err
		return
	}
	o.write("event: " + name + "\ndata: " + string(b) + "\n\n")
}

// done ends the stream, and flushes it.
func (o *sseWriter) done() {
	o.write("event: done\ndata: [DONE]\n\n")
	o.flush()
}

func (o *sseWriter) write(s string) {
	if o.err != nil {
		return
	}
	if _, err := io.WriteString(o.w, s); err != nil {
		o.err = err
		return
	}
	o.pending = true
}

func (o *sseWriter) flush() {
	if o.pending && o.err == nil {
		o.f.Flush()
		o.pending = false
	}
}

// runStream turns a thread's events and a run's live frames into OpenAI's stream events, in OpenAI's order. It
// folds the whole thread with the read models' own folds, so that each event's data is the object as it was then;
// it shows only what concerns its run from sequence `from` on.
type runStream struct {
	threadID, runID string
	withThread      bool
	from            uint64
	out             *sseWriter

	seq      uint64 // last log event folded
	run      thread.RunView
	steps    map[string]*thread.StepView
	messages map[string]*thread.ThreadMessageView

	stepShown map[string]bool   // created and in_progress sent
	msgShown  map[string]bool   // created and in_progress sent
	msgDone   map[string]bool   // completed (or incomplete) sent
	msgText   map[string]string // text sent as deltas
	args      map[string]map[int]*sentCall
	queue     []runlive.Frame // frames that wait for the log to catch up with them
	finished  bool
}

// sentCall is what a stream has shown of one tool call.
type sentCall struct {
	head bool // the delta with its ID and name
	args int  // bytes of arguments
}

func newRunStream(threadID, runID string, withThread bool, from uint64, out *sseWriter) *runStream {
	return &runStream{threadID: threadID, runID: runID, withThread: withThread, from: from, out: out,
		steps: map[string]*thread.StepView{}, messages: map[string]*thread.ThreadMessageView{},
		stepShown: map[string]bool{}, msgShown: map[string]bool{}, msgDone: map[string]bool{},
		msgText: map[string]string{}, args: map[string]map[int]*sentCall{}}
}

// live takes a frame from the live subject: shown now if the log has caught up with the turn it belongs to,
// queued otherwise.
func (s *runStream) live(fr runlive.Frame) {
	if len(s.queue) > 0 || fr.After > s.seq {
		s.queue = append(s.queue, fr)
		return
	}
	s.showFrame(fr)
}

func (s *runStream) flushQueue() {
	for len(s.queue) > 0 && s.queue[0].After <= s.seq && !s.finished {
		fr := s.queue[0]
		s.queue = s.queue[1:]
		s.showFrame(fr)
	}
}

func (s *runStream) showFrame(fr runlive.Frame) {
	if s.finished {
		return
	}
	switch fr.Kind {
	case runlive.KindMessage:
		if !s.stepShown[fr.StepID] {
			s.showStepStart(s.synthStep(fr.StepID, events.StepTypeMessageCreation, fr.MessageID, fr.AssistantID, fr.At))
		}
		if !s.msgShown[fr.MessageID] {
			s.showMessageStart(s.synthMessage(fr.MessageID, fr.AssistantID, fr.At))
		}
	case runlive.KindText:
		if s.msgShown[fr.MessageID] && !s.msgDone[fr.MessageID] && fr.Offset == len(s.msgText[fr.MessageID]) {
			s.textDelta(fr.MessageID, fr.Text)
		}
	case runlive.KindToolStep:
		if !s.stepShown[fr.StepID] {
			s.showStepStart(s.synthStep(fr.StepID, events.StepTypeToolCalls, "", fr.AssistantID, fr.At))
		}
	case runlive.KindTool:
		if !s.stepShown[fr.StepID] || s.steps[fr.StepID] != nil {
			return // the step's calls are already whole in the log, or were never announced
		}
		c := s.call(fr.StepID, fr.Index)
		if fr.Offset != c.args {
			return
		}
		s.toolDelta(fr.StepID, fr.Index, fr.CallID, fr.Name, fr.Text, c)
	}
}

func (s *runStream) call(stepID string, index int) *sentCall {
	calls := s.args[stepID]
	if calls == nil {
		calls = map[int]*sentCall{}
		s.args[stepID] = calls
	}
	c := calls[index]
	if c == nil {
		c = &sentCall{}
		calls[index] = c
	}
	return c
}

// event folds one log event and shows what it means for the run.
func (s *runStream) event(e events.Envelope) {
	// Live frames that belong before this event are shown first.
	s.flushQueueBefore(e.Sequence)
	s.seq = e.Sequence
	show := e.Sequence >= s.from
	switch d := e.Event.(type) {
	case events.ThreadCreated:
		if show && s.withThread {
			s.out.event("thread.created", threadWire(thread.NewThreadView(e, d)))
		}
	case events.MessageCreated:
		m := projections.NewThreadMessageView(e, d)
		s.messages[d.MessageID] = &m
		if !show || d.RunID != s.runID {
			s.msgShown[d.MessageID], s.msgDone[d.MessageID] = true, true
			break
		}
		s.showMessage(&m, d.StepID)
	case events.StepCreated:
		st := thread.NewStepView(e, d)
		s.steps[d.StepID] = &st
		if !show || d.RunID != s.runID {
			s.stepShown[d.StepID] = true
			break
		}
		if !d.Completed {
			s.showStepCreated(&st)
			break
		}
		// Made completed: shown made (in progress), then completed, as when a StepCompleted followed it.
		open := st
		open.Status, open.CompletedAt = events.StepStatusInProgress, nil
		s.showStepCreated(&open)
		s.out.event("thread.run.step.completed", stepWire(st))
	case events.StepCompleted:
		if st := s.steps[d.StepID]; st != nil {
			thread.ApplyStep(st, e)
			if show && d.RunID == s.runID {
				s.out.event("thread.run.step.completed", stepWire(*st))
			}
		}
	case events.StepEnded:
		if st := s.steps[d.StepID]; st != nil {
			thread.ApplyStep(st, e)
			if show && d.RunID == s.runID {
				s.out.event("thread.run.step."+d.Status, stepWire(*st))
			}
		}
	default:
		s.runEvent(e, show)
	}
	s.flushQueue()
}

// flushQueueBefore shows queued frames of turns that began before seq.
func (s *runStream) flushQueueBefore(seq uint64) {
	for len(s.queue) > 0 && s.queue[0].After < seq && !s.finished {
		fr := s.queue[0]
		s.queue = s.queue[1:]
		s.showFrame(fr)
	}
}

// runEvent folds a change of the run's status and shows it.
func (s *runStream) runEvent(e events.Envelope, show bool) {
	if thread.RunOf(e.Event) != s.runID {
		return
	}
	if d, ok := e.Event.(events.RunCreated); ok {
		s.run = thread.NewRunView(e, d)
		if show {
			s.out.event("thread.run.created", runWire(s.run))
			s.out.event("thread.run.queued", runWire(s.run))
		}
		return
	}
	thread.ApplyRun(&s.run, e)
	if d, ok := e.Event.(events.RunToolOutputsSubmitted); ok {
		if st := s.steps[d.StepID]; st != nil {
			thread.ApplyStep(st, e)
			if show {
				s.out.event("thread.run.step.completed", stepWire(*st))
			}
		}
	}
	if !show {
		return
	}
	switch e.Event.(type) {
	case events.RunModified:
	case events.RunToolOutputsSubmitted:
		s.out.event("thread.run.queued", runWire(s.run))
	case events.RunStarted:
		s.out.event("thread.run.in_progress", runWire(s.run))
	case events.RunCancelling:
		s.out.event("thread.run.cancelling", runWire(s.run))
	default:
		// requires_action, completed, incomplete, failed, cancelled, expired: the stream's last event.
		s.out.event("thread.run."+s.run.Status, runWire(s.run))
		s.finished = true
	}
}

// showMessage shows a completed message of the run: its step and its start if the live frames did not, the text
// the deltas did not carry, and its completion.
func (s *runStream) showMessage(m *thread.ThreadMessageView, stepID string) {
	if stepID != "" && !s.stepShown[stepID] {
		st := s.steps[stepID]
		if st == nil {
			syn := s.synthStep(stepID, events.StepTypeMessageCreation, m.ID, m.AssistantID, m.CreatedAt.Unix())
			st = &syn
		}
		s.showStepStart(*st)
	}
	if !s.msgShown[m.ID] {
		s.showMessageStart(inProgress(*m))
	}
	if text := messageText(*m); !s.msgDone[m.ID] {
		sent := s.msgText[m.ID]
		if strings.HasPrefix(text, sent) && len(text) > len(sent) {
			s.textDelta(m.ID, text[len(sent):])
		}
	}
	s.msgDone[m.ID] = true
	name := "thread.message.completed"
	if m.Status == events.MessageStatusIncomplete {
		name = "thread.message.incomplete"
	}
	s.out.event(name, messageWire(*m))
}

// showStepCreated shows a step the log recorded: its start if the live frames did not, and for tool calls the
// parts of the calls the deltas did not carry.
func (s *runStream) showStepCreated(st *thread.StepView) {
	if !s.stepShown[st.ID] {
		start := *st
		start.ToolCalls = nil
		s.showStepStart(start)
	}
	for i, c := range stepWire(*st).StepDetails.ToolCalls {
		sc := s.call(st.ID, i)
		if c.Function == nil {
			// A file_search call: its results come whole with the step's completion.
			if !sc.head {
				sc.head = true
				s.out.event("thread.run.step.delta", map[string]any{
					"id": st.ID, "object": "thread.run.step.delta",
					"delta": map[string]any{"step_details": map[string]any{"type": "tool_calls", "tool_calls": []any{
						map[string]any{"index": i, "id": c.ID, "type": c.Type, c.Type: map[string]any{}}}}},
				})
			}
			continue
		}
		rest := ""
		if sc.args < len(c.Function.Arguments) {
			rest = c.Function.Arguments[sc.args:]
		}
		if !sc.head || rest != "" {
			s.toolDelta(st.ID, i, c.ID, c.Function.Name, rest, sc)
		}
	}
}

func (s *runStream) showStepStart(st thread.StepView) {
	s.stepShown[st.ID] = true
	o := stepWire(st)
	s.out.event("thread.run.step.created", o)
	s.out.event("thread.run.step.in_progress", o)
}

func (s *runStream) showMessageStart(m thread.ThreadMessageView) {
	s.msgShown[m.ID] = true
	o := messageWire(m)
	s.out.event("thread.message.created", o)
	s.out.event("thread.message.in_progress", o)
}

func (s *runStream) textDelta(messageID, text string) {
	s.msgText[messageID] += text
	s.out.event("thread.message.delta", map[string]any{
		"id": messageID, "object": "thread.message.delta",
		"delta": map[string]any{"content": []any{map[string]any{
			"index": 0, "type": "text", "text": map[string]any{"value": text},
		}}},
	})
}

func (s *runStream) toolDelta(stepID string, index int, callID, name, args string, c *sentCall) {
	call := map[string]any{"index": index, "type": "function"}
	fn := map[string]any{"arguments": args}
	if !c.head {
		call["id"] = callID
		fn["name"] = name
		fn["output"] = nil
		c.head = true
	}
	call["function"] = fn
	c.args += len(args)
	s.out.event("thread.run.step.delta", map[string]any{
		"id": stepID, "object": "thread.run.step.delta",
		"delta": map[string]any{"step_details": map[string]any{"type": "tool_calls", "tool_calls": []any{call}}},
	})
}

// synthStep is a step as it looks when it starts, before the log records it.
func (s *runStream) synthStep(id, typ, messageID, assistantID string, at int64) thread.StepView {
	return thread.StepView{ID: id, CreatedAt: time.Unix(at, 0), RunID: s.runID, AssistantID: assistantID,
		ThreadID: s.threadID, Type: typ, Status: events.StepStatusInProgress, MessageID: messageID}
}

// synthMessage is an assistant's message as it looks when it starts.
func (s *runStream) synthMessage(id, assistantID string, at int64) thread.ThreadMessageView {
	return thread.ThreadMessageView{ID: id, CreatedAt: time.Unix(at, 0), ThreadID: s.threadID, RunID: s.runID,
		AssistantID: assistantID, Status: messageInProgress, Role: "assistant"}
}

// inProgress is a message as it looked before its text came.
func inProgress(m thread.ThreadMessageView) thread.ThreadMessageView {
	m.Status, m.IncompleteReason, m.Content = messageInProgress, "", nil
	return m
}

func messageText(m thread.ThreadMessageView) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
