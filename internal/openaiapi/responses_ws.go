package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
)

// The Responses API's WebSocket mode: GET /v1/responses upgraded, with the key in the upgrade's Authorization
// header as on every /v1 route (the face's middleware answers 401 before any upgrade). The client sends
// {"type": "response.create", ...the create parameters} messages, one after another on the socket; each is answered
// with the events its response's SSE stream has (the same frames, from the same log, numbered alike), each as one
// text message, up to its terminal event (response.completed, .failed, .incomplete, or error). A request's
// stream_id names its lane, which openai-node's helper routes events by: it is echoed on every event of its
// response. The requests of a lane (those without a stream_id are one lane) are served one at a time in the order
// they came, so that a lane's responses never interleave; lanes are served side by side, as the protocol has them. A
// request that cannot be served (bad JSON, a bad parameter, a previous response not found) is answered with an
// error event naming the problem, and the socket serves the next one.
//
// A socket has a bounded life. One idle (no message from the client, no response in progress in any lane) for
// Deps.SocketIdle is closed with 1000 and the reason "idle timeout": nothing was interrupted, and openai-node's
// reconnecting client takes 1000 as final rather than opening a socket only to idle it out again (its next send
// finds the socket closed; the Agents SDK opens a new one when its pooled socket is closed). Any socket is ended
// after Deps.SocketLifetime (60 minutes, OpenAI's connection limit for this mode), but no response in progress is
// cut: from then on each message is answered in its lane's turn with an error event whose code is OpenAI's,
// websocket_connection_limit_reached, and once the lanes have ended the socket is closed with 1001 (going away): the
// client was active and should go on on a new socket, and 1001 is the code openai-node's client reconnects on.

const (
	// maxWSLanes bounds the lanes (stream_ids) of one socket, and so the responses it streams at once.
	maxWSLanes = 8
	// maxWSQueued bounds the messages a lane holds while one of its responses is being served; past it the socket
	// is not read (TCP pushes back on the client) until one is taken. A message is at most maxBodyBytes, as a
	// POST's body.
	maxWSQueued = 1
	// wsWriteTimeout bounds how long one event may wait for a client that does not read: it is then dropped.
	wsWriteTimeout = 30 * time.Second
	// defaultSocketIdle and defaultSocketLifetime are Deps.SocketIdle's and Deps.SocketLifetime's defaults.
	defaultSocketIdle     = 5 * time.Minute
	defaultSocketLifetime = 60 * time.Minute
	// wsLimitCode is the code of the error event OpenAI answers a request on a socket past its lifetime with.
	wsLimitCode = "websocket_connection_limit_reached"
)

// streamIDPattern is what openai-node's lane helper accepts as a stream_id; it is only ever echoed back.
var streamIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

// responsesSocket serves GET /v1/responses: the WebSocket mode (a plain GET is a method the route lacks).
func (f *Face) responsesSocket(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		f.WriteError(w, r, errs.E(errs.MethodNotAllowed, "GET %s is the Responses API's WebSocket mode: it needs a WebSocket upgrade", r.URL.Path))
		return
	}
	// Any origin: the key is an Authorization header, which a browser page cannot put on another site's socket
	// (the origin check guards sockets that cookies authenticate), and a Node client may send an Origin of its own.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{"*"}, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		// Accept has answered the request (400, 403 for a foreign origin)
		f.d.Logger.Info("responses: websocket upgrade refused", "err", err)
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(maxBodyBytes)
	// Serving ends with the request's context, which the server ends on shutdown, or when the client goes. The
	// socket is read under a context of its own, so that a shutdown can still say goodbye on it (a read whose
	// context ends closes the socket at once).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	readCtx, stopReading := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReading()
	account := principal(r).AccountID
	f.d.Logger.Debug("responses: websocket open", "account", account)
	incoming := make(chan socketMessage)
	// readErr is what ended the reading, for the log: the reader may still be in a read when serving ends (a
	// close this side made ends it a moment later), so it is passed, not shared.
	readErr := make(chan error, 1)
	closedFor := "" // why the server closed the socket (idle, lifetime), for the log
	go func() {
		defer cancel()
		for {
			typ, data, err := c.Read(readCtx)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case incoming <- socketMessage{data: data, binary: typ != websocket.MessageText}:
			case <-ctx.Done():
				return
			}
		}
	}()
	// Each lane (stream_id) has its queue and its server: its requests are served in order, lanes side by side.
	var wg sync.WaitGroup
	lanes := map[string]chan socketMessage{}
	streaming := &streamingLanes{m: map[string]string{}}
	messages := 0
	// busy counts the messages handed to lanes and not yet answered; quiet is told when it falls to 0, so that the
	// idle timer starts again from the end of the last response, and a socket past its lifetime closes then.
	var busy atomic.Int64
	quiet := make(chan struct{}, 1)
	idle := time.NewTimer(f.d.SocketIdle)
	defer idle.Stop()
	lifetime := time.NewTimer(f.d.SocketLifetime)
	defer lifetime.Stop()
	pastLifetime := false
	closeWith := func(code websocket.StatusCode, reason string) {
		_ = c.Close(code, reason)
		cancel()
		closedFor = reason
	}
	// waiting takes a message the reader holds already, if any: one sent just before a timer fired is answered,
	// not dropped by the close.
	waiting := func() (socketMessage, bool) {
		select {
		case m := <-incoming:
			return m, true
		default:
			return socketMessage{}, false
		}
	}
dispatch:
	for {
		var msg socketMessage
		var got bool
		select {
		case <-ctx.Done():
			break dispatch
		case <-idle.C:
			if busy.Load() > 0 {
				continue // started again when the lanes are quiet
			}
			if msg, got = waiting(); !got {
				closeWith(websocket.StatusNormalClosure, "idle timeout")
				break dispatch
			}
		case <-lifetime.C:
			pastLifetime = true
			if busy.Load() > 0 {
				continue // closed when the responses in progress have ended
			}
			if msg, got = waiting(); !got {
				closeWith(websocket.StatusGoingAway, lifetimeReason)
				break dispatch
			}
		case <-quiet:
			if busy.Load() > 0 {
				continue
			}
			if msg, got = waiting(); !got {
				if pastLifetime {
					closeWith(websocket.StatusGoingAway, lifetimeReason)
					break dispatch
				}
				idle.Reset(f.d.SocketIdle)
				continue
			}
		case msg = <-incoming:
		}
		idle.Reset(f.d.SocketIdle)
		h := headOf(msg)
		if pastLifetime && h.Type != "response.steer" {
			// Not admitted (it will not be served): answered in its lane's turn, after the response in progress
			// there, so that the lane helper does not take the refusal for that response's end.
			msg.pastLifetime = true
		} else if f.d.Auth != nil {
			// Each message is a request as a POST is, and is admitted before anything is held for it: its key is
			// checked again (one revoked since the upgrade ends the socket) and the message counted against the
			// key's rate, whatever it turns out to be (a steer, a bad message).
			if _, err := httpapi.Admit(ctx, f.d.Auth, f.d.Limiter, r.Header.Get("Authorization"), false); err != nil {
				httpapi.LogError(f.d.Logger, r, err)
				out := &wsSink{ctx: ctx, c: c, streamID: h.lane()}
				out.send("error", wsErrorFrame(err))
				if errs.CodeOf(err) == errs.Unauthorized {
					_ = c.Close(websocket.StatusPolicyViolation, "the API key is no longer valid")
					cancel()
					break dispatch
				}
				continue
			}
		}
		if h.Type == "response.steer" {
			// Answered at once, not in its lane's turn: steering is about a response in progress.
			target, _ := h.PreviousResponseID.(string)
			steerFailed(ctx, c, h, streaming.laneOf(target))
			continue
		}
		lane := h.lane()
		q, ok := lanes[lane]
		if !ok {
			if len(lanes) == maxWSLanes {
				out := &wsSink{ctx: ctx, c: c, streamID: lane}
				if msg.pastLifetime {
					out.send("error", f.limitFrame())
					continue
				}
				out.send("error", wsErrorFrame(errs.InvalidField("stream_id", "A socket serves at most %d stream_ids.", maxWSLanes)))
				continue
			}
			q = make(chan socketMessage, maxWSQueued)
			lanes[lane] = q
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-ctx.Done():
						return
					case m := <-q:
						f.serveSafely(ctx, cancel, c, r.WithContext(ctx), m, streaming)
						if busy.Add(-1) == 0 {
							select {
							case quiet <- struct{}{}:
							default: // already told
							}
						}
					}
				}
			}()
		}
		// A full lane stops the reading (TCP pushes back on the client) until its server takes one.
		busy.Add(1)
		select {
		case q <- msg:
			messages++
		case <-ctx.Done():
			break dispatch
		}
	}
	wg.Wait()
	if r.Context().Err() != nil {
		// The node is stopping: the client may reconnect (to another node); what it was told is in the log.
		_ = c.Close(websocket.StatusGoingAway, "server shutting down")
		f.d.Logger.Debug("responses: websocket closed for shutdown", "account", account, "messages", messages)
		return
	}
	var reason error
	select {
	case reason = <-readErr:
	default:
	}
	f.d.Logger.Debug("responses: websocket closed", "account", account, "messages", messages, "reason", reason, "closed_for", closedFor)
}

// head is what the dispatch reads of a message: its type and lane, and a steer's target and input.
type head struct {
	Type               string          `json:"type"`
	StreamID           any             `json:"stream_id"`
	PreviousResponseID any             `json:"previous_response_id"`
	Input              json.RawMessage `json:"input"`
}

// headOf reads a message's head; a binary message or bad JSON has none (it is answered in the default lane).
func headOf(m socketMessage) head {
	var h head
	if m.binary || json.Unmarshal(m.data, &h) != nil {
		return head{}
	}
	return h
}

// lane is the stream_id a message names, the lane it is served in; one that names none, or none a lane can have, is
// served in the default lane, which answers a bad stream_id with an error event.
func (h head) lane() string {
	if id, ok := h.StreamID.(string); ok && streamIDPattern.MatchString(id) {
		return id
	}
	return ""
}

// steerFailed answers a response.steer: steering (input added to a response in progress, continued by a successor)
// is not something Contrail's responses do, so it is refused as openai-node types the refusal, with the input
// given back for the client to send in its next response.create. It is not an error event, which the lane helper
// would take as the end of the response in progress on the default lane.
func steerFailed(ctx context.Context, c *websocket.Conn, h head, lane string) {
	target, _ := h.PreviousResponseID.(string)
	input := h.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	// Its lane is the target's, when the target is streaming on this socket: openai-node routes the refusal by it.
	out := &wsSink{ctx: ctx, c: c, streamID: lane}
	out.send("response.steer.failed", obj{"sequence_number": 0,
		"error": obj{"type": "invalid_request_error", "code": "steering_not_supported",
			"message": "Steering is not supported: send the input in a new 'response.create' with previous_response_id."},
		"steer": obj{"input": input, "previous_response_id": clip(target)}})
}

// socketMessage is one message a socket read: a binary one is answered in its turn, with an error event.
type socketMessage struct {
	data   []byte
	binary bool
	// pastLifetime: the socket had lived its time when the message came; it is answered, in its turn, with an error
	// event saying so instead of being served.
	pastLifetime bool
}

// lifetimeReason is the close reason of a socket ended at its lifetime (a close reason is at most 123 bytes).
const lifetimeReason = "connection lifetime reached: open a new socket"

// serveSafely is serveSocketMessage in a lane's goroutine, which the HTTP server's recoverer does not cover: a panic
// is logged with its stack, answered as a POST's would be (a server_error), and ends this socket only, not the node.
func (f *Face) serveSafely(ctx context.Context, end context.CancelFunc, c *websocket.Conn, r *http.Request, msg socketMessage,
	streaming *streamingLanes) {
	defer func() {
		if v := recover(); v != nil {
			f.d.Logger.ErrorContext(ctx, "responses: websocket request panicked", "panic", v, "stack", string(debug.Stack()),
				"request_id", middleware.GetReqID(r.Context()))
			out := &wsSink{ctx: ctx, c: c, streamID: headOf(msg).lane()}
			out.send("error", wsErrorFrame(errs.E(errs.Internal, "Internal error.")))
			end()
		}
	}()
	f.serveSocketMessage(ctx, c, r, msg, streaming)
}

// streamingLanes are the lanes of the responses a socket streams now, by response ID: a steer is answered in its
// target's lane.
type streamingLanes struct {
	mu sync.Mutex
	m  map[string]string
}

func (l *streamingLanes) add(id, lane string) (remove func()) {
	l.mu.Lock()
	l.m[id] = lane
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.m, id)
		l.mu.Unlock()
	}
}

// laneOf is the lane response id streams in on this socket ("" when it streams in none: the default lane).
func (l *streamingLanes) laneOf(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

// serveSocketMessage answers one message of a socket: a response.create's response, streamed, or an error event.
func (f *Face) serveSocketMessage(ctx context.Context, c *websocket.Conn, r *http.Request, msg socketMessage,
	streaming *streamingLanes) {
	out := &wsSink{ctx: ctx, c: c}
	fail := func(err error) {
		httpapi.LogError(f.d.Logger, r, err)
		out.send("error", wsErrorFrame(err))
	}
	if msg.pastLifetime {
		out.streamID = headOf(msg).lane()
		out.send("error", f.limitFrame())
		return
	}
	if msg.binary {
		fail(errs.E(errs.Invalid, "a message must be a text message holding a JSON object, not a binary one"))
		return
	}
	in, err := parseFields(msg.data)
	if err != nil {
		fail(errs.E(errs.Invalid, "We could not parse the JSON of your message: each message must be one JSON object."))
		return
	}
	if out.streamID, err = in.str("stream_id"); err != nil {
		out.streamID = ""
		fail(err)
		return
	}
	if out.streamID != "" && !streamIDPattern.MatchString(out.streamID) {
		id := out.streamID
		out.streamID = ""
		fail(errs.InvalidField("stream_id", "Invalid 'stream_id': expected 1 to 256 letters, digits, '_', '.' or '-', but got '%s'.", clip(id)))
		return
	}
	typ, err := in.str("type")
	if err != nil {
		fail(err)
		return
	}
	switch typ {
	case "response.create":
	case "":
		fail(errs.Missing("type"))
		return
	default:
		fail(errs.InvalidField("type", "Invalid 'type': expected 'response.create', but got '%s'.", clip(typ)))
		return
	}
	var background bool
	if _, err := get(in, "background", &background); err != nil {
		fail(err)
		return
	}
	if background {
		fail(errs.InvalidField("background", "Background mode is not supported over WebSocket."))
		return
	}
	// generate (a socket's own field) false asks for a response recorded without the model's answer, to follow
	// later: not one Contrail can make, so it is refused rather than answered with output not asked for.
	generate := true
	if _, err := get(in, "generate", &generate); err != nil {
		fail(err)
		return
	}
	if !generate {
		fail(errs.InvalidField("generate", "'generate': false is not supported: every response is answered by the model."))
		return
	}
	// stream is implicit over a socket: openai-node's helper leaves it out, the Agents SDK sends true, and false
	// is answered with the same events (the socket has no other way to answer); only its type is checked.
	var stream bool
	if _, err := get(in, "stream", &stream); err != nil {
		fail(err)
		return
	}
	delete(in.m, "stream")
	nr, err := f.decodeNewResponse(r, in)
	if err != nil {
		fail(err)
		return
	}
	nr.Stream = true
	b, err := f.beginResponse(r, nr)
	if err != nil {
		fail(err)
		return
	}
	defer b.close()
	defer streaming.add(b.id, out.streamID)()
	fr := &frames{after: -1, failedAlone: true}
	f.pumpResponse(ctx, out, fr, b.watch, 0, b.live)
	if out.ended || ctx.Err() != nil {
		return
	}
	// The stream of a cancelled or deleted response ends without a terminal event (SSE just ends): a socket's
	// client, waiting for one before its next request, is told with an error event.
	code, what := "response_cancelled", "was cancelled"
	if fr.s.Deleted {
		code, what = "response_deleted", "was deleted before it ended"
	}
	out.send("error", errorFrame("invalid_request_error", code, fmt.Sprintf("Response %s %s.", b.id, what)))
}

// wsErrorFrame is the error event a socket answers a request it cannot serve with: the error object as openai-node
// types it (with the HTTP status the POST would have had), and its fields at the top as a stream's error event has
// them.
func wsErrorFrame(err error) obj {
	status, o := errorFor(err)
	var code, param any
	if o.Code != nil {
		code = *o.Code
	}
	if o.Param != nil {
		param = *o.Param
	}
	detail := obj{"type": o.Type, "code": code, "message": o.Message, "param": param}
	if e := errs.As(err); e != nil && e.RetryAfter > 0 {
		// the header a POST refused for its rate would have had, as the error object carries headers
		detail["headers"] = obj{"retry-after": strconv.Itoa(int((e.RetryAfter + time.Second - 1) / time.Second))}
	}
	return obj{"status": status, "code": code, "message": o.Message, "param": param, "error": detail}
}

// limitFrame is the error event a message on a socket past its lifetime is answered with, as OpenAI answers it.
func (f *Face) limitFrame() obj {
	limit := f.d.SocketLifetime.String()
	if f.d.SocketLifetime%time.Minute == 0 {
		limit = fmt.Sprintf("%d minutes", f.d.SocketLifetime/time.Minute)
	}
	msg := fmt.Sprintf("Responses websocket connection limit reached (%s). Create a new websocket connection to continue.", limit)
	return obj{"status": http.StatusBadRequest, "code": wsLimitCode, "message": msg, "param": nil,
		"error": obj{"type": "invalid_request_error", "code": wsLimitCode, "message": msg, "param": nil}}
}

// wsSink sends a response's frames as a socket's text messages, each with the request's stream_id when it had one.
type wsSink struct {
	ctx      context.Context
	c        *websocket.Conn
	streamID string
	// ended is set once a terminal event was sent: the client's next request may follow.
	ended bool
}

func (s *wsSink) send(typ string, data obj) bool {
	data["type"] = typ
	if s.streamID != "" {
		data["stream_id"] = s.streamID
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return false
	}
	switch typ {
	case "response.completed", "response.failed", "response.incomplete", "error":
		s.ended = true
	}
	// Bounded by its own timeout only: a write whose context ends closes the socket at once (even one that has just
	// finished), so the socket's end must not reach it; the pump stops sending when the socket's context ends.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), wsWriteTimeout)
	defer cancel()
	return s.c.Write(ctx, websocket.MessageText, raw) == nil
}

// flush and done: every message is sent whole as it is written, and the socket stays open for the next request.
func (s *wsSink) flush() {}
func (s *wsSink) done()  {}
