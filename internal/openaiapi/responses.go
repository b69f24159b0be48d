package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
	"github.com/contrailhq/contrail/internal/natsx"
)

// The Responses API (POST/GET/DELETE /v1/responses...). The face checks a request and records the response with
// the commands; the model loop (handlers/responder), a consumer of the log on whichever node, drives it; the face
// answers from the response's events as the log commits them, so that what it says was done is in the log (a
// follow-up a moment later sees every item).

func (f *Face) createResponse(w http.ResponseWriter, r *http.Request) {
	in, err := f.readNewResponse(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	b, err := f.beginResponse(r, in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	defer b.close()
	if in.Stream {
		f.streamResponse(w, r, b.watch, 0, -1, b.live)
		return
	}
	if in.Background {
		// The response as created, queued, as OpenAI answers a background create: read back from the log, it could
		// already be in progress (the responder takes it at once), and the answer would depend on the machine's load.
		var s response.State
		for _, e := range b.appended.Events {
			s.Apply(e)
		}
		writeJSON(w, wireResponse(&s))
		return
	}
	var s response.State
	for e, err := range b.watch.Follow(r.Context(), events.Version{}) {
		if err != nil {
			f.WriteError(w, r, fmt.Errorf("follow response %s: %w", b.id, err))
			return
		}
		s.Apply(e)
		if s.Ended() && s.Exists {
			writeJSON(w, wireResponse(&s))
			return
		}
	}
	f.WriteError(w, r, r.Context().Err())
}

// begun is a response just recorded: its ID, the watch on its events from the first, and for a stream the live
// subject's pieces of its text.
type begun struct {
	id       string
	watch    *eventstore.Watch
	live     chan *nats.Msg
	sub      *nats.Subscription
	appended eventstore.Appended
}

func (b *begun) close() {
	if b.sub != nil {
		_ = b.sub.Unsubscribe()
	}
	if b.watch != nil {
		b.watch.Close()
	}
}

// beginResponse checks what a create request refers to and records the response, for a POST or a WebSocket's
// response.create alike; r carries the caller and the context the response is watched in. The caller closes it.
func (f *Face) beginResponse(r *http.Request, in newResponse) (*begun, error) {
	if err := f.openCompactions(principal(r).AccountID, "input", in.Input); err != nil {
		return nil, err
	}
	if err := f.checkReferences(r, &in.ResponseCreated); err != nil {
		return nil, err
	}
	b := &begun{id: events.NewPrefixedID(ids.Response.Prefix)}
	ref := events.Ref{Type: "response", ID: b.id}
	// Watched before the append, so that every event after it is in the watch however fast the loop is.
	if in.Stream && f.d.NC != nil {
		b.live = make(chan *nats.Msg, 4096)
		sub, err := f.d.NC.ChanSubscribe(f.d.Names.LiveSubject("response", b.id), b.live)
		if err != nil {
			return nil, fmt.Errorf("listen to response %s: %w", b.id, err)
		}
		b.sub = sub
		natsx.Registered(r.Context(), f.d.NC)
	}
	watch, err := f.d.Store.Watch(r.Context(), ref)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("watch response %s: %w", b.id, err)
	}
	b.watch = watch
	if b.appended, err = f.d.Responses.Create(r.Context(), principal(r), b.id, in.ResponseCreated); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// streamResponse writes a response's stream from the log as server-sent events: the frames of its events from the
// first on, those after `after` sent, until the response ends or the client goes. live, when not nil, brings the
// model's text as the loop publishes it: its frames are sent at once and those the committed message repeats are
// not sent again.
func (f *Face) streamResponse(w http.ResponseWriter, r *http.Request, watch *eventstore.Watch, from uint64, after int, live <-chan *nats.Msg) {
	f.pumpResponse(r.Context(), startSSE(w), &frames{after: after}, watch, from, live)
}

// sink is where a response's frames go: an SSE body (sse) or a WebSocket (wsSink). flush pushes out what send
// wrote; done ends the stream after its terminal frame.
type sink interface {
	send(typ string, data obj) bool
	flush()
	done()
}

// pumpResponse sends a response's frames (fr, which it points at out) to out from the log and the live subject,
// until the response ends, the log fails (an error frame) or ctx ends.
func (f *Face) pumpResponse(ctx context.Context, out sink, fr *frames, watch *eventstore.Watch, from uint64, live <-chan *nats.Msg) {
	fr.send = out.send
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logCh := make(chan logItem, 64)
	go func() {
		defer close(logCh)
		for e, err := range watch.FollowFrom(ctx, from) {
			select {
			case logCh <- logItem{env: e, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-live:
			var d response.LiveDelta
			if json.Unmarshal(m.Data, &d) == nil && !fr.offer(d) {
				return
			}
			if len(live) == 0 {
				out.flush()
			}
		case it, ok := <-logCh:
			if !ok {
				return
			}
			if it.err != nil {
				f.d.Logger.Warn("responses: follow", "err", it.err)
				_, o := errorFor(it.err)
				code := ""
				if o.Code != nil {
					code = *o.Code
				}
				frame := errorFrame(o.Type, code, o.Message)
				frame["type"], frame["sequence_number"] = "error", fr.seq
				out.send("error", frame)
				out.flush()
				return
			}
			if !fr.event(it.env) {
				return
			}
			if fr.ended {
				out.done()
				return
			}
			if len(logCh) == 0 {
				out.flush()
			}
		}
	}
}

func (f *Face) getResponse(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "response_id")
	include, err := includeQuery(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Responses.Get(r.Context(), principal(r).AccountID, id, eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	q := r.URL.Query()
	if wantsReplay(r) {
		after := -1
		if v := q.Get("starting_after"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				f.WriteError(w, r, errs.InvalidField("starting_after", "Invalid 'starting_after': expected a non-negative integer."))
				return
			}
			after = n
		}
		watch, err := f.d.Store.Watch(r.Context(), events.Ref{Type: "response", ID: id})
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		defer watch.Close()
		f.streamResponse(w, r, watch, 0, after, nil)
		return
	}
	// A new slice: the state shares its Include with the repository's held copy, which other requests read.
	s.Request.Include = slices.Concat(s.Request.Include, include)
	writeJSON(w, wireResponse(&s))
}

// wantsReplay reports whether a GET of a response asks for its stream: ?stream=true as openai-node sends it, or
// a JSON body {"stream": true} as openai-go's GetStreaming sends it on its GET.
func wantsReplay(r *http.Request) bool {
	if r.URL.Query().Get("stream") == "true" {
		return true
	}
	if r.Body == nil || r.ContentLength == 0 {
		return false
	}
	in, err := readFields(r)
	if err != nil {
		return false
	}
	var stream bool
	_, err = get(in, "stream", &stream)
	return err == nil && stream
}

// queryList reads a list query parameter sent as name=a&name=b or name[]=a&name[]=b (openai-go's brackets).
func queryList(r *http.Request, name string) []string {
	q := r.URL.Query()
	return append(q[name], q[name+"[]"]...)
}

func (f *Face) deleteResponse(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "response_id")
	if _, err := f.d.Responses.Delete(r.Context(), principal(r), id); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "response.deleted", Deleted: true})
}

func (f *Face) cancelResponse(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "response_id")
	app, err := f.d.Responses.Cancel(r.Context(), principal(r), id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Responses.Get(r.Context(), principal(r).AccountID, id, app.LastSeq())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireResponse(&s))
}

// listInputItems answers a response's input items, newest first unless asked otherwise.
func (f *Face) listInputItems(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	asked, err := includeQuery(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Responses.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "response_id"), eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	include := slices.Concat(s.Request.Include, asked)
	items := make([]listed[obj], 0, len(s.Request.Input))
	for i, it := range s.Request.Input {
		items = append(items, listed[obj]{id: it.ID, seq: uint64(i), obj: wireItem(it, include)})
	}
	writeJSON(w, paginate(items, p))
}

// countInputTokens answers POST /v1/responses/input_tokens: the tokens of the instructions, the context and input,
// the tools offered and a json_schema format as the model's tokenizer counts them, each image by a fixed estimate
// (tokens.ImageTokens). The fields are checked as a create checks them (a 4xx naming the field), so that a count is
// never of a request a create would refuse.
func (f *Face) countInputTokens(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	model, err := in.str("model")
	if err == nil && model != "" && f.d.Models != nil {
		// as on create: a model no provider here runs has no count to give
		if _, _, rerr := f.d.Models.Resolve(model); rerr != nil {
			err = errs.InvalidField("model", "The requested model '%s' does not exist.", clip(model))
		}
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	instructions, err := in.str("instructions")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items, err := readInput(in)
	var given []events.ResponseTool
	if err == nil {
		given, err = f.readResponseTools(r, in)
	}
	var choice, text json.RawMessage
	if err == nil {
		choice, err = readToolChoice(in, given)
	}
	if err == nil {
		text, err = readTextConfig(in)
	}
	if err == nil {
		// the vector stores and files named are the caller's, as on create: another's is a 404 naming the field
		err = f.checkReferences(r, &events.ResponseCreated{Tools: given, Input: items})
	}
	if err == nil {
		// a compaction item counts as the summary the model would read
		err = f.openCompactions(principal(r).AccountID, "input", items)
	}
	var before []events.Item
	if err == nil {
		before, err = f.countedContext(r, in)
	}
	var tools []llm.Tool
	if err == nil {
		tools, err = f.countedTools(given, choice)
	}
	if format, ok := formatTool(text); ok {
		tools = append(tools, format)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var msgs []llm.Message
	if instructions != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: instructions})
	}
	texts := map[string]string{}
	for _, it := range slices.Concat(before, items) {
		role := it.Role
		if role == "" {
			role = llm.RoleUser
		}
		m := llm.Message{Role: role, Content: it.Text() + it.Arguments + string(it.Output)}
		for _, c := range it.Content {
			if c.Type == "input_file" && c.FileID != "" {
				text, err := f.fileText(r, texts, c.FileID)
				if err != nil {
					f.WriteError(w, r, err)
					return
				}
				m.Content += text
			}
			if c.Type == "input_image" {
				// counted by its detail alone (tokens.ImageTokens): a file's bytes are not read for it, only its first
				// ones, by the check above
				m.Images = append(m.Images, llm.Image{URL: c.ImageURL, Detail: c.Detail})
			}
		}
		msgs = append(msgs, m)
	}
	writeJSON(w, obj{"object": "response.input_tokens",
		"input_tokens": tokens.CountMessages(model, msgs) + tokens.CountTools(model, tools)})
}

// fileText is what the model is shown of an input_file, for input_tokens: the file's text between markers, as the
// model loop puts it into the message (handlers/responder readFiles), or a note of about the same size for a file
// whose text is not shown. Read once per file (seen).
func (f *Face) fileText(r *http.Request, seen map[string]string, id string) (string, error) {
	if text, ok := seen[id]; ok || f.d.FileText == nil {
		return text, nil
	}
	name, text, err := f.d.FileText(r.Context(), principal(r).AccountID, id)
	switch errs.CodeOf(err) {
	case errs.NotFound, errs.Invalid:
		seen[id] = fmt.Sprintf("\n\n[file %s is not shown: %s]", id, errs.MessageOf(err))
		return seen[id], nil
	}
	if err != nil {
		return "", fmt.Errorf("count: read file %s: %w", id, err)
	}
	seen[id] = fmt.Sprintf("\n\n[file %s (%s)]\n%s\n[end of file %s]", name, id, text, name)
	return seen[id], nil
}

// countedContext is what a response made with the request's previous_response_id or conversation would be shown
// before its input: the previous response's history and its own context, or the conversation's items, read as the
// caller's (another account's, or one that is not there, is a 404 naming the field, as on create).
func (f *Face) countedContext(r *http.Request, in fields) ([]events.Item, error) {
	account := principal(r).AccountID
	prev, err := in.str("previous_response_id")
	if err != nil {
		return nil, err
	}
	conv, err := readConversationRef(in)
	if err != nil {
		return nil, err
	}
	notFound := func(err error, field string) error {
		if e := errs.As(err); e != nil && e.Code == errs.NotFound {
			e.Field = field
		}
		return err
	}
	switch {
	case prev != "" && conv != "":
		return nil, errs.InvalidField("conversation", "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.")
	case prev != "":
		if err := ids.Check("previous_response_id", ids.Response, prev); err != nil {
			return nil, err
		}
		s, err := f.d.Responses.Get(r.Context(), account, prev, eventstore.Fresh)
		if err != nil {
			return nil, notFound(err, "previous_response_id")
		}
		history, err := f.d.Responses.History(r.Context(), s)
		if err != nil {
			return nil, fmt.Errorf("count: read the history of %s: %w", prev, err)
		}
		return slices.Concat(history, s.Context()), nil
	case conv != "":
		s, err := f.d.Conversations.Get(r.Context(), account, conv, eventstore.Fresh)
		if err != nil {
			return nil, notFound(err, "conversation")
		}
		return s.Live(), nil
	}
	return nil, nil
}

// countedTools are the request's tools as the model would be offered them: function tools as given, server-side
// tools as the model loop offers them (Deps.OfferedTool). An mcp tool's functions are listed from its server only
// when a response runs: it is refused, naming it, rather than counted as nothing.
// With tool_choice allowed_tools, only the tools it names are counted, as only they are offered.
func (f *Face) countedTools(given []events.ResponseTool, choice json.RawMessage) ([]llm.Tool, error) {
	// checked by readToolChoice; it lets every tool through unless it is allowed_tools
	c, _ := response.ToolChoiceOf(choice, given)
	out := make([]llm.Tool, 0, len(given))
	for i, t := range given {
		if !c.Lets(t) {
			continue
		}
		if t.Type == "function" {
			out = append(out, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
			continue
		}
		var offered llm.Tool
		ok := f.d.OfferedTool != nil
		if ok {
			offered, ok = f.d.OfferedTool(t)
		}
		if !ok {
			return nil, errs.InvalidField(fmt.Sprintf("tools[%d].type", i), "Invalid 'tools[%d]': input_tokens cannot count a %s tool on this server (its functions are known only when a response runs); count without it.", i, t.Type)
		}
		out = append(out, offered)
	}
	return out, nil
}

// formatTool is a json_schema text format as input_tokens counts it: the model is sent the schema (as its
// response_format), which OpenAI counts in a request's input; it is counted as a tool's parameters are, an estimate
// of the same size, rather than left out.
func formatTool(text json.RawMessage) (llm.Tool, bool) {
	var t struct {
		Format struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"format"`
	}
	if len(text) == 0 || json.Unmarshal(text, &t) != nil || t.Format.Type != "json_schema" {
		return llm.Tool{}, false
	}
	return llm.Tool{Name: t.Format.Name, Description: t.Format.Description, Parameters: t.Format.Schema}, true
}

// ResponseCommands is what the face asks of the response commands (commands.Responses).
type ResponseCommands interface {
	Create(ctx context.Context, actor principalT, id string, in events.ResponseCreated) (eventstore.Appended, error)
	Get(ctx context.Context, account, id string, atLeast uint64) (response.State, error)
	Load(ctx context.Context, id string, atLeast uint64) (response.State, error)
	Delete(ctx context.Context, actor principalT, id string) (eventstore.Appended, error)
	Cancel(ctx context.Context, actor principalT, id string) (eventstore.Appended, error)
	CheckFile(ctx context.Context, account, param, id string) error
	CheckImage(ctx context.Context, account, param, id string) error
	// History is the chain of previous responses a response follows, oldest first (what compaction summarizes).
	History(ctx context.Context, s response.State) ([]events.Item, error)
}

// checkReferences checks that the vector stores and files a request names are the caller's: another account's
// are not found, as if they did not exist.
func (f *Face) checkReferences(r *http.Request, rq *events.ResponseCreated) error {
	actor := principal(r)
	for i, t := range rq.Tools {
		for j, id := range t.VectorStoreIDs {
			if f.d.VectorStores == nil {
				break
			}
			if _, err := f.d.VectorStores.Get(r.Context(), actor, id); err != nil {
				if e := errs.As(err); e != nil && e.Code == errs.NotFound {
					e.Field = fmt.Sprintf("tools[%d].vector_store_ids[%d]", i, j)
				}
				return err
			}
		}
	}
	return f.checkItemFiles(r, "input", rq.Input)
}

// checkItemFiles checks the files items name (param is where the items are: "input", "items"): each is the
// caller's, and one an input_image shows is an image a model can be shown, so that a refusal names the field when
// the request is made rather than the model's turn failing later.
func (f *Face) checkItemFiles(r *http.Request, param string, items []events.Item) error {
	account := principal(r).AccountID
	for i, it := range items {
		for j, c := range it.Content {
			if c.FileID == "" {
				continue
			}
			at := fmt.Sprintf("%s[%d].content[%d].file_id", param, i, j)
			check := f.d.Responses.CheckFile
			if c.Type == "input_image" && c.ImageURL == "" {
				check = f.d.Responses.CheckImage
			}
			if err := check(r.Context(), account, at, c.FileID); err != nil {
				return err
			}
		}
	}
	return nil
}
