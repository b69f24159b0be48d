package openaiapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
)

// A response's stream is synthesised from its events, the same way every time: the POST that creates it, a GET
// ?stream=true replay from any node, before or after a restart, all produce the same frames with the same
// sequence numbers, since each is a pure function of the log (a message's deltas are split as the model streamed
// them: the item records the lengths of its pieces). See docs/architecture.md.

// frames turns a response's events into its stream's frames.
type frames struct {
	s response.State
	// seq is the sequence number of the next frame; after skips frames up to it (starting_after), -1 none.
	seq   int
	after int
	send  func(typ string, data obj) bool
	// ended is set once the terminal frame was produced.
	ended bool
	// failedAlone ends a failed response's frames with response.failed alone, without the error frame before it
	// (its number is kept, so that both transports number the same events alike): a WebSocket's clients take an
	// error event as the end of the response too, and would read the response.failed after it as the next one's.
	failedAlone bool
	// The message the current turn is streaming live: its ID, the frames sent for it (from liveFrom on), the
	// pieces sent; liveOff stops live frames for the turn after a piece went missing.
	liveTurn   int
	liveID     string
	liveFrom   int
	livePieces []string
	liveOff    bool
	// held are pieces that came ahead of the events they follow (early), in the order they came.
	held []response.LiveDelta
}

// maxHeld bounds the pieces a stream holds for a log that lags behind them (a model streams far fewer before its
// response's start is folded).
const maxHeld = 4096

// offer takes a piece of the current turn's text from the live subject: it is sent at once (live), or held while
// it came ahead of the log and sent once the log has caught up with it (release, after each event).
func (f *frames) offer(d response.LiveDelta) bool {
	if f.early(d) {
		if len(f.held) < maxHeld {
			f.held = append(f.held, d)
		}
		return true
	}
	return f.live(d)
}

// release sends the held pieces the log has caught up with.
func (f *frames) release() bool {
	kept := f.held[:0]
	for _, d := range f.held {
		if f.early(d) {
			kept = append(kept, d)
		} else if !f.live(d) {
			return false
		}
	}
	f.held = kept
	return true
}

// early reports whether a piece of text came ahead of the log: the response's start, or the previous turn's record,
// is not yet folded (the piece comes straight from the model loop over core NATS; the events it follows come
// through the watch, later under load). Such a piece is held and given to live once the log has caught up; dropped,
// a stream whose model had sent its first pieces showed nothing until the message was committed.
func (f *frames) early(d response.LiveDelta) bool {
	s := &f.s
	if f.ended {
		return false
	}
	return !s.Exists || s.Status == events.ResponseStatusQueued ||
		(s.Status == events.ResponseStatusInProgress && d.Turn > s.Turns)
}

// live sends the frames of a piece of the current turn's text before its message is committed: the message's
// output_item.added and content_part.added with the first piece, then a delta per piece, numbered as the
// committed message will number them (its ID and index are derived from the turn; it is the turn's first item).
// A piece of another turn, or after a gap, is left to the committed message.
func (f *frames) live(d response.LiveDelta) bool {
	s := &f.s
	if f.ended || !s.Exists || s.Status != events.ResponseStatusInProgress || d.Turn != s.Turns || len(s.PartialTurn()) > 0 {
		return true
	}
	if f.liveID == "" || f.liveTurn != d.Turn {
		if d.Index != 0 {
			return true
		}
		f.liveTurn, f.liveID, f.liveFrom, f.livePieces, f.liveOff = d.Turn, response.ItemID(s, d.Turn, 0, "msg_"), f.seq, nil, false
		index := len(s.Output)
		if !f.emit("response.output_item.added", obj{"output_index": index, "item": obj{"type": "message", "id": f.liveID,
			"status": events.ResponseStatusInProgress, "role": "assistant", "content": []obj{}}}) {
			return false
		}
		if !f.emit("response.content_part.added", obj{"item_id": f.liveID, "output_index": index, "content_index": 0,
			"part": wirePart(events.ItemContent{Type: "output_text"})}) {
			return false
		}
	}
	if f.liveOff || d.Index != len(f.livePieces) {
		f.liveOff = true
		return true
	}
	f.livePieces = append(f.livePieces, d.Text)
	return f.emit("response.output_text.delta", obj{"item_id": f.liveID, "output_index": len(s.Output), "content_index": 0,
		"delta": d.Text, "logprobs": []any{}})
}

// settleLive, as the committed item it belongs to arrives, rewinds the numbering to where the live frames began,
// so the item's frames are made again with the same numbers and those already sent are skipped. A message that
// does not begin with what was sent (another attempt at the turn after a crash) is framed after it instead.
func (f *frames) settleLive(it events.Item) {
	if f.liveID == "" || it.ID != f.liveID {
		return
	}
	sent := f.seq - f.liveFrom
	f.liveID = ""
	if len(it.Content) == 0 {
		return
	}
	pieces := chunks(it.Content[0].Text, it.Chunks)
	if len(pieces) < len(f.livePieces) {
		return
	}
	for i, p := range f.livePieces {
		if pieces[i] != p {
			return
		}
	}
	f.seq = f.liveFrom
	f.after = max(f.after, f.liveFrom+sent-1)
}

// emit produces one frame; it reports false once the client is gone.
func (f *frames) emit(typ string, data obj) bool {
	n := f.seq
	f.seq++
	if n <= f.after {
		return true
	}
	data["type"] = typ
	data["sequence_number"] = n
	return f.send(typ, data)
}

// event folds one event of the response and produces its frames.
func (f *frames) event(e events.Envelope) bool {
	return f.frame(e) && f.release()
}

// frame sends the frames of one event of the response.
func (f *frames) frame(e events.Envelope) bool {
	f.s.Apply(e)
	s := &f.s
	switch d := e.Event.(type) {
	case events.ResponseCreated:
		if !f.emit("response.created", obj{"response": wireResponse(s)}) {
			return false
		}
		if d.Background {
			return f.emit("response.queued", obj{"response": wireResponse(s)})
		}
		return f.emit("response.in_progress", obj{"response": wireResponse(s)})
	case events.ResponseStarted:
		return f.emit("response.in_progress", obj{"response": wireResponse(s)})
	case events.ResponseItemAdded:
		f.settleLive(d.Item)
		return f.item(len(s.Output)-1, d.Item)
	case events.ResponseCompleted:
		f.ended = true
		return f.emit("response.completed", obj{"response": wireResponse(s)})
	case events.ResponseIncomplete:
		f.ended = true
		return f.emit("response.incomplete", obj{"response": wireResponse(s)})
	case events.ResponseFailed:
		f.ended = true
		if f.failedAlone {
			f.seq++
		} else if !f.emit("error", errorFrame(failureType(d.Code), d.Code, d.Message)) {
			return false
		}
		return f.emit("response.failed", obj{"response": wireResponse(s)})
	case events.ResponseCancelled:
		// openai-node knows no response.cancelled event: the stream of a cancelled response just ends.
		f.ended = true
	case events.ResponseDeleted:
		f.ended = true
	}
	return true
}

// item produces the frames of one output item, in the order openai-node's accumulator checks.
func (f *frames) item(index int, it events.Item) bool {
	include := f.s.Request.Include
	done := wireItem(it, include)
	added := wireItem(it, include)
	added["status"] = events.ResponseStatusInProgress
	id := it.ID
	at := obj{"item_id": id, "output_index": index}
	with := func(kv obj) obj {
		o := obj{}
		for k, v := range at {
			o[k] = v
		}
		for k, v := range kv {
			o[k] = v
		}
		return o
	}
	ok := true
	step := func(typ string, data obj) {
		if ok {
			ok = f.emit(typ, data)
		}
	}
	switch it.Type {
	case "message":
		added["content"] = []obj{}
		step("response.output_item.added", obj{"output_index": index, "item": added})
		for ci, c := range it.Content {
			part := wirePart(c)
			empty := wirePart(events.ItemContent{Type: c.Type})
			step("response.content_part.added", with(obj{"content_index": ci, "part": empty}))
			if c.Type == "output_text" {
				for _, piece := range chunks(c.Text, it.Chunks) {
					step("response.output_text.delta", with(obj{"content_index": ci, "delta": piece, "logprobs": []any{}}))
				}
				for ai, a := range wireAnnotations(c.Annotations) {
					step("response.output_text.annotation.added", with(obj{"content_index": ci, "annotation_index": ai, "annotation": a}))
				}
				step("response.output_text.done", with(obj{"content_index": ci, "text": c.Text, "logprobs": []any{}}))
			}
			step("response.content_part.done", with(obj{"content_index": ci, "part": part}))
		}
	case "function_call":
		added["arguments"] = ""
		step("response.output_item.added", obj{"output_index": index, "item": added})
		for _, piece := range chunks(it.Arguments, it.Chunks) {
			step("response.function_call_arguments.delta", with(obj{"delta": piece}))
		}
		step("response.function_call_arguments.done", with(obj{"arguments": it.Arguments, "name": it.Name}))
	case "file_search_call":
		step("response.output_item.added", obj{"output_index": index, "item": added})
		step("response.file_search_call.in_progress", with(obj{}))
		step("response.file_search_call.searching", with(obj{}))
		step("response.file_search_call.completed", with(obj{}))
	case "code_interpreter_call":
		added["code"] = ""
		step("response.output_item.added", obj{"output_index": index, "item": added})
		step("response.code_interpreter_call.in_progress", with(obj{}))
		if it.Code != "" {
			step("response.code_interpreter_call_code.delta", with(obj{"delta": it.Code}))
		}
		step("response.code_interpreter_call_code.done", with(obj{"code": it.Code}))
		step("response.code_interpreter_call.interpreting", with(obj{}))
		step("response.code_interpreter_call.completed", with(obj{}))
	case "mcp_list_tools":
		// openai-node's names: response.mcp_list_tools.in_progress, .completed, .failed
		added["tools"] = []obj{}
		step("response.output_item.added", obj{"output_index": index, "item": added})
		step("response.mcp_list_tools.in_progress", with(obj{}))
		if it.Error != "" {
			step("response.mcp_list_tools.failed", with(obj{}))
		} else {
			step("response.mcp_list_tools.completed", with(obj{}))
		}
	case "mcp_call":
		// response.mcp_call_arguments.delta/.done (an underscore, not a dot), then response.mcp_call.*
		added["arguments"], added["output"], added["error"] = "", nil, nil
		step("response.output_item.added", obj{"output_index": index, "item": added})
		step("response.mcp_call.in_progress", with(obj{}))
		for _, piece := range chunks(it.Arguments, it.Chunks) {
			step("response.mcp_call_arguments.delta", with(obj{"delta": piece}))
		}
		step("response.mcp_call_arguments.done", with(obj{"arguments": it.Arguments}))
		if it.Error != "" || it.Status == events.ResponseStatusFailed {
			step("response.mcp_call.failed", with(obj{}))
		} else {
			step("response.mcp_call.completed", with(obj{}))
		}
	default:
		step("response.output_item.added", obj{"output_index": index, "item": added})
	}
	step("response.output_item.done", obj{"output_index": index, "item": done})
	return ok
}

// errorFrame is an error event's body in both shapes clients read: openai-node's and openai-go's types have code,
// message and param at the top, as OpenAI sends them; the Open Responses specification has them in an error
// object with a type, which is also what openai-node's stream throws as its APIError when present (openai-go ends
// the stream with the event as its error, as it does for any frame with an error field). An empty code is null.
func errorFrame(typ, code, message string) obj {
	var c any
	if code != "" {
		c = code
	}
	return obj{"code": c, "message": message, "param": nil,
		"error": obj{"type": typ, "code": c, "message": message, "param": nil}}
}

// failureType is the error type of a failed response's code, as OpenAI types its errors.
func failureType(code string) string {
	switch code {
	case "invalid_prompt":
		return "invalid_request_error"
	case "rate_limit_exceeded":
		return "requests"
	}
	return "server_error"
}

// sse writes a response's frames as server-sent events: `event:` is the frame's type, as Open Responses asks.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	s := &sse{w: w, f: fl}
	s.flush()
	return s
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *sse) send(typ string, data obj) bool {
	raw, err := json.Marshal(data)
	if err != nil {
		return false
	}
	_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", typ, raw)
	return err == nil
}

func (s *sse) done() {
	_, _ = fmt.Fprint(s.w, "data: [DONE]\n\n")
	s.flush()
}
