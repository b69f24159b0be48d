package julepapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/natsx"
)

// chatBody is Julep's ChatInput.
type chatBody struct {
	Messages         []messageBody    `json:"messages"`
	Agent            present[string]  `json:"agent"`
	Tools            []toolBody       `json:"tools"`
	ToolChoice       json.RawMessage  `json:"tool_choice"`
	Recall           present[bool]    `json:"recall"`
	RecallTools      bool             `json:"recall_tools"`
	Save             present[bool]    `json:"save"`
	Stream           bool             `json:"stream"`
	AutoRunTools     present[bool]    `json:"auto_run_tools"`
	Model            present[string]  `json:"model"`
	Temperature      present[float64] `json:"temperature"`
	TopP             present[float64] `json:"top_p"`
	MaxTokens        present[int]     `json:"max_tokens"`
	Stop             json.RawMessage  `json:"stop"`
	Seed             present[int64]   `json:"seed"`
	ResponseFormat   json.RawMessage  `json:"response_format"`
	FrequencyPenalty present[float64] `json:"frequency_penalty"`
	PresencePenalty  present[float64] `json:"presence_penalty"`
	Metadata         json.RawMessage  `json:"metadata"`
}

// messageBody is a chat message as clients send it.
type messageBody struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       present[string] `json:"name"`
	ToolCallID present[string] `json:"tool_call_id"`
	ToolCalls  []toolCallJSON  `json:"tool_calls"`
}

// request is the chat the body asks for.
func (b chatBody) request() (events.SessionChatRequested, error) {
	r := events.SessionChatRequested{Agent: canonical(b.Agent.Value), Save: true, Recall: true, RecallTools: b.RecallTools,
		Stream: b.Stream, AutoRunTools: b.AutoRunTools.ptr(), Metadata: notNull(b.Metadata),
		Settings: events.JulepChatSettings{Model: b.Model.Value, Temperature: b.Temperature.ptr(), TopP: b.TopP.ptr(),
			Seed: b.Seed.ptr(), ResponseFormat: notNull(b.ResponseFormat), ToolChoice: notNull(b.ToolChoice),
			FrequencyPenalty: b.FrequencyPenalty.ptr(), PresencePenalty: b.PresencePenalty.ptr()}}
	if v := b.Save.ptr(); v != nil {
		r.Save = *v
	}
	if v := b.Recall.ptr(); v != nil {
		r.Recall = *v
	}
	if v := b.MaxTokens.ptr(); v != nil {
		r.Settings.MaxTokens = *v
	}
	if stop := notNull(b.Stop); stop != nil {
		var one string
		if json.Unmarshal(stop, &one) == nil {
			r.Settings.Stop = []string{one}
		} else if err := json.Unmarshal(stop, &r.Settings.Stop); err != nil {
			return r, errs.InvalidField("stop", "stop must be a string or a list of strings")
		}
	}
	if b.Agent.ptr() != nil {
		if err := checkUUID("agent", b.Agent.Value); err != nil {
			return r, errs.InvalidField("agent", "agent must be the UUID of an agent of the session")
		}
	}
	for i, m := range b.Messages {
		text, err := flatten(fmt.Sprintf("messages[%d].content", i), m.Content)
		if err != nil {
			return r, err
		}
		jm := events.JulepMessage{Role: m.Role, Content: text, Name: m.Name.Value, ToolCallID: m.ToolCallID.Value}
		for _, c := range m.ToolCalls {
			jm.ToolCalls = append(jm.ToolCalls, events.JulepToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		r.Messages = append(r.Messages, jm)
	}
	for _, t := range b.Tools {
		r.Tools = append(r.Tools, t.tool())
	}
	return r, nil
}

// flatten reads a message's content: a string, a list of strings, or a list of text parts (joined), or null.
func flatten(field string, raw json.RawMessage) (string, error) {
	if len(notNull(raw)) == 0 {
		return "", nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errs.InvalidField(field, "%s must be a string or a list of strings or content parts", field)
	}
	texts := make([]string, 0, len(parts))
	for i, p := range parts {
		if json.Unmarshal(p, &one) == nil {
			texts = append(texts, one)
			continue
		}
		var part struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(p, &part); err != nil {
			return "", errs.InvalidField(fmt.Sprintf("%s[%d]", field, i), "a content part must be a string or an object")
		}
		if part.Type != "" && part.Type != "text" {
			return "", errs.E(errs.Invalid, "%s[%d]: %s content is not supported by this server; send text", field, i, part.Type)
		}
		texts = append(texts, part.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// readChat reads a chat request: its body and, for a chat, its request ID.
func (f *Face) readChat(r *http.Request, withID bool) (events.SessionChatRequested, string, bool, error) {
	raw, err := readBody(r)
	if err != nil {
		return events.SessionChatRequested{}, "", false, err
	}
	id, retry := "", false
	if withID {
		if id, retry, err = f.requestID(r.Context(), r, raw); err != nil {
			return events.SessionChatRequested{}, "", false, err
		}
	}
	var b chatBody
	if err := decode(raw, &b); err != nil {
		return events.SessionChatRequested{}, "", false, err
	}
	req, err := b.request()
	return req, id, retry, err
}

// chat asks a session a chat and answers with the turn's answer: 201 with Julep's ChatResponse, or with stream
// Julep's server-sent chunks as the model writes.
func (f *Face) chat(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "session_id")
	req, requestID, retry, err := f.readChat(r, true)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	// Listen before asking, so that an answer that comes at once is not missed; no consumer is made.
	key := events.JulepAggregateID(principal(r).AccountID, id)
	ends := make(chan *nats.Msg, 8)
	var deltas chan *nats.Msg
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	for _, name := range []string{"chat_answered", "chat_failed"} {
		sub, err := f.d.NC.ChanSubscribe(f.d.Names.EventSubject(session.Aggregate, key, name), ends)
		if err != nil {
			f.WriteError(w, r, fmt.Errorf("await the chat: %w", err))
			return
		}
		subs = append(subs, sub)
	}
	if req.Stream {
		deltas = make(chan *nats.Msg, 1024)
		sub, err := f.d.NC.ChanSubscribe(f.d.Names.LiveSubject(session.Aggregate, key), deltas)
		if err != nil {
			f.WriteError(w, r, fmt.Errorf("await the chat: %w", err))
			return
		}
		subs = append(subs, sub)
	}
	natsx.Registered(r.Context(), f.d.NC)
	started, err := f.d.Sessions.Chat(r.Context(), principal(r), id, requestID, retry, req)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.d.ChatWait)
	defer cancel()
	if req.Stream {
		f.stream(ctx, w, r, id, started.TurnID, started.Seq, ends, deltas)
		return
	}
	t, err := f.awaitTurn(ctx, r, id, started.TurnID, started.Seq, ends)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if t.Failure != nil {
		f.WriteError(w, r, turnError(t.Failure))
		return
	}
	created(w, chatResponse(t))
}

// turnError is a failed turn as an error of the face: the failure's words, its code's status (a failure of no known
// kind is the model's or an agent's: 503, which clients retry with a new turn).
func turnError(f *events.SessionChatFailed) error {
	code := errs.Code(f.Code)
	if code == "" || code == errs.Internal {
		code = errs.Unavailable
	}
	return &errs.Error{Code: code, Message: f.Error}
}

// awaitTurn waits until the turn has ended and returns it as it ended.
func (f *Face) awaitTurn(ctx context.Context, r *http.Request, id, turnID string, seq uint64, ends <-chan *nats.Msg) (session.Turn, error) {
	for {
		t, done, err := f.turn(ctx, r, id, turnID, seq)
		if err != nil || done {
			return t, err
		}
		select {
		case <-ends:
		case <-time.After(time.Second):
			// A reconnect may have lost a published answer: the log has it.
		case <-ctx.Done():
			if r.Context().Err() != nil {
				return session.Turn{}, r.Context().Err()
			}
			return session.Turn{}, errs.E(errs.DeadlineExpired, "the chat has not been answered yet; send the same request again to go on waiting for it")
		}
	}
}

// turn reads a turn of the session (done: it has ended), as of at least the sequence of its request.
func (f *Face) turn(ctx context.Context, r *http.Request, id, turnID string, seq uint64) (session.Turn, bool, error) {
	var out session.Turn
	done := false
	err := f.d.Sessions.Read(ctx, principal(r), id, seq, func(s *session.State) error {
		t, ok := s.Julep.Turn(turnID)
		if !ok {
			return errs.NotFoundf("chat", turnID)
		}
		out, done = *t, t.Done()
		if t.Prepared != nil {
			p := *t.Prepared
			out.Prepared = &p
		}
		return nil
	})
	return out, done, err
}

// chatResponseJSON is Julep's ChatResponse.
type chatResponseJSON struct {
	ID        string            `json:"id"`
	CreatedAt string            `json:"created_at"`
	Jobs      []string          `json:"jobs"`
	Docs      []docRef          `json:"docs"`
	Usage     events.JulepUsage `json:"usage"`
	Choices   []choiceJSON      `json:"choices"`
}

type choiceJSON struct {
	Index        int            `json:"index"`
	FinishReason string         `json:"finish_reason"`
	Message      chatMessage    `json:"message"`
	ToolCalls    []toolCallJSON `json:"tool_calls,omitempty"`
}

type chatMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

func chatResponse(t session.Turn) chatResponseJSON {
	a := t.Answer
	calls := toolCallsOut(a.ToolCalls)
	return chatResponseJSON{ID: t.ID, CreatedAt: jsonTime(t.EndAt), Jobs: []string{}, Docs: docsOf(t), Usage: a.Usage,
		Choices: []choiceJSON{{Index: 0, FinishReason: a.Finish, ToolCalls: calls,
			Message: chatMessage{Role: "assistant", Content: a.Text, ToolCalls: calls}}}}
}

// docsOf are the docs a turn recalled, as Julep's DocReferences.
func docsOf(t session.Turn) []docRef {
	out := []docRef{}
	if t.Prepared == nil {
		return out
	}
	for _, d := range t.Prepared.Docs {
		out = append(out, docRef{ID: d.DocID, Owner: events.DocOwner{Role: d.OwnerRole, ID: d.OwnerID}, Title: d.Title,
			Snippet: snippet{Index: d.SnippetIndex, Content: d.Snippet}, Distance: d.Distance, Metadata: orObject(d.Metadata)})
	}
	return out
}

// chunkJSON is one of Julep's streamed chunks.
type chunkJSON struct {
	ID        string             `json:"id"`
	CreatedAt string             `json:"created_at"`
	Jobs      []string           `json:"jobs"`
	Docs      []docRef           `json:"docs"`
	Usage     *events.JulepUsage `json:"usage"`
	Choices   []chunkChoice      `json:"choices"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// stream answers the chat as server-sent chunks: the model's words as they come on the session's live subject, then
// a last chunk with what the words missed (a delta lost on the way, or a retry that joined late), the tool calls,
// the finish reason and the usage. A failed turn ends the stream with Julep's error object.
func (f *Face) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, id, turnID string, seq uint64, ends, deltas <-chan *nats.Msg) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	created := jsonTime(f.d.Store.Now())
	var docs []docRef
	docsKnown := false
	var sent strings.Builder
	write := func(v any) bool {
		raw, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", raw); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	chunk := func(d delta, finish *string, usage *events.JulepUsage) chunkJSON {
		if docs == nil {
			docs = []docRef{}
		}
		return chunkJSON{ID: turnID, CreatedAt: created, Jobs: []string{}, Docs: docs, Usage: usage,
			Choices: []chunkChoice{{Index: 0, Delta: d, FinishReason: finish}}}
	}
	for {
		t, done, err := f.turn(ctx, r, id, turnID, seq)
		if err != nil {
			write(errorChunk(err))
			return
		}
		if !docsKnown && t.Prepared != nil {
			docs, docsKnown = docsOf(t), true
		}
		if done {
			if t.Failure != nil {
				write(errorChunk(turnError(t.Failure)))
				return
			}
			a := t.Answer
			rest, found := strings.CutPrefix(a.Text, sent.String())
			if !found {
				f.d.Logger.Warn("a streamed answer's words differ from its text", "session", id, "turn", turnID)
				rest = ""
			}
			finish := a.Finish
			write(chunk(delta{Role: "assistant", Content: rest, ToolCalls: toolCallsOut(a.ToolCalls)}, &finish, &a.Usage))
			return
		}
		select {
		case m := <-deltas:
			var d agents.LiveDelta
			if json.Unmarshal(m.Data, &d) != nil || d.MessageID != turnID || d.Text == "" {
				continue
			}
			if !docsKnown { // the first words: the turn is prepared, and its docs go in every chunk
				if t, _, err := f.turn(ctx, r, id, turnID, seq); err == nil && t.Prepared != nil {
					docs, docsKnown = docsOf(t), true
				}
			}
			sent.WriteString(d.Text)
			if !write(chunk(delta{Role: "assistant", Content: d.Text}, nil, nil)) {
				return
			}
		case <-ends:
		case <-time.After(time.Second):
		case <-ctx.Done():
			if r.Context().Err() == nil {
				write(errorChunk(errs.E(errs.DeadlineExpired, "the chat has not been answered yet; send the same request again to go on waiting for it")))
			}
			return
		}
	}
}

// errorChunk is Julep's error object, sent as the stream's last event.
func errorChunk(err error) map[string]any {
	return map[string]any{"error": map[string]any{"message": errs.MessageOf(err), "code": string(errs.CodeOf(err))}}
}

// render answers the prompt a chat would send, without asking the model or recording anything.
func (f *Face) render(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "session_id")
	req, _, _, err := f.readChat(r, false)
	if err == nil {
		err = f.d.Sessions.CheckChat(req)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var snap julepchat.Snapshot
	err = f.d.Sessions.Read(r.Context(), principal(r), id, eventstore.Fresh, func(s *session.State) error {
		if req.Agent == "" {
			req.Agent = s.Julep.Spec.Agents[0]
		} else if !slices.Contains(s.Julep.Spec.Agents, req.Agent) {
			return errs.InvalidField("agent", "agent %s is not an agent of session %s", req.Agent, id)
		}
		snap = julepchat.Snapshot{SessionID: id, Account: s.Account, Spec: s.Julep.Spec, Entries: slices.Clone(s.Julep.Entries), Request: req}
		if n := len(s.Julep.Summaries); n > 0 {
			snap.Summary = s.Julep.Summaries[n-1]
		}
		return nil
	})
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	p, err := f.d.Preparer.Prepare(r.Context(), snap)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	msgs := make([]map[string]any, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = map[string]any{"role": m.Role, "content": m.Content}
		if m.Name != "" {
			msgs[i]["name"] = m.Name
		}
		if len(m.ToolCalls) > 0 {
			msgs[i]["tool_calls"] = toolCallsOut(m.ToolCalls)
		}
		if m.ToolCallID != "" {
			msgs[i]["tool_call_id"] = m.ToolCallID
		}
	}
	tools := make([]map[string]any, len(p.Offered))
	for i, o := range p.Offered {
		tools[i] = map[string]any{"type": "function", "name": o.Tool.Name,
			"function": map[string]any{"name": o.Model.Name, "description": o.Model.Description, "parameters": o.Model.Parameters}}
	}
	docs := docsOf(session.Turn{Prepared: &p.Event})
	var choice any
	if tc := notNull(req.Settings.ToolChoice); tc != nil && !bytes.Equal(tc, []byte("null")) {
		choice = tc
	}
	ok(w, map[string]any{"messages": msgs, "docs": docs, "tools": tools, "tool_choice": choice})
}
