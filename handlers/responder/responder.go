// Package responder is the model loop of the Responses API: a consumer of the log that drives each created
// response through its model calls ("turns") to an end. A turn asks the model with the response's context (its
// conversation's items, or its previous responses' input and output, then its own input and what it recorded so
// far), records the items the answer makes (a message, function calls, server tool calls with what they gave) as
// events, and either ends the response or, after a server tool ran, asks again.
//
// Every record is decided on the response aggregate with optimistic concurrency and IDs derived from the response
// and the turn (domain/response), so a response can be driven again from any point: after a crash the durable
// consumer hands its created event to another node (or to this one after a restart) and the loop picks up where
// the log says it stands, recording no item twice.
//
// It shares the Assistants run worker's turn machinery below the aggregate: the model router (llm.Provider), the
// sandbox and the vector stores' search are the same objects, and how tools are offered and read back, citations,
// truncation, a streamed answer's pieces and a failed call's code are handlers/turn's, used by both loops.
//
// It imports events, domain/response, llm and handlers/turn; never a face, a command or a read model (what it asks
// of them is Recorder and the Executors).
package responder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/nats-io/nats.go"
)

// Recorder is what the loop asks of the response commands (commands.Responses).
type Recorder interface {
	Load(ctx context.Context, id string, atLeast uint64) (response.State, error)
	Start(ctx context.Context, s response.State) (response.State, error)
	RecordTurn(ctx context.Context, s response.State, turn int, items []events.Item, usage events.TokenUsage, end response.End, finish bool) (response.State, error)
	// RecordStart records a call's start before it is made; response.ErrNotStarted says not to make it.
	RecordStart(ctx context.Context, s response.State, turn int, it events.Item) (response.State, error)
	Finish(ctx context.Context, s response.State, end response.End) (response.State, error)
	History(ctx context.Context, s response.State) ([]events.Item, error)
	AppendToConversation(ctx context.Context, s response.State) error
	Ending(ctx context.Context, s response.State) (ended <-chan struct{}, stop func())
}

// Executor runs one kind of server-side tool (file_search, code_interpreter; mcp next): the seam a new tool kind
// plugs into. The loop offers the tool to the model as a function and, when the model calls it, records the item
// Run returns and gives the model its output on the next turn.
type Executor interface {
	// Offer is how the tool is offered to the model; ok false offers nothing (a tool this node cannot run).
	Offer(tool events.ResponseTool) (t llm.Tool, ok bool)
	// Run answers one call. itemID is the ID the recorded item must carry (derived from the turn, so a turn
	// done again names it alike). The item is recorded whatever err says; err is for the log.
	Run(ctx context.Context, s response.State, tool events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, error)
	// Output is what the model reads of a recorded item of this kind on later turns.
	Output(it events.Item) string
	// ItemType is the type of the items it records ("file_search_call").
	ItemType() string
}

// MultiOfferer is an executor whose one tool offers the model several functions, from what the response's context
// holds (mcp: the tools a server listed, as allowed). Offer is not asked of it.
type MultiOfferer interface {
	OfferAll(tool events.ResponseTool, context []events.Item) []llm.Tool
}

// Starter is an executor whose calls act outside Contrail (an mcp call; code run in a sandbox): the loop records
// each call's start before Run makes it, so that a call a crash interrupted is found on the next delivery and
// recorded as interrupted (response.Interrupt), never made twice. Started is the call as Run will record it (its
// type, itemID, what was asked), or ok false when Run makes no outside call (an approval request, arguments that
// do not read).
type Starter interface {
	Started(tool events.ResponseTool, call llm.ToolCall, itemID string) (it events.Item, ok bool)
}

// Preparer is an executor that records items before the model is asked (mcp: the server's tools, listed once per
// context; the calls the user approved since the last response). itemID names the i-th item it returns. end, when
// set, ends the response with those items (a server that cannot be listed fails it). start records a call's start
// before the call is made (see Starter); it returns an error when the call must not be made.
type Preparer interface {
	Prepare(ctx context.Context, s response.State, tool events.ResponseTool, context []events.Item, itemID func(i int, prefix string) string,
		start func(events.Item) error) (items []events.Item, end response.End)
}

// Config wires a Loop.
type Config struct {
	Responses Recorder
	Models    llm.Provider
	// Images reads image files for the model; nil shows the model a note in place of each.
	Images turn.ImageFiles
	// Texts reads the text of other files the input shows (input_file); nil shows the model a note in place of each.
	Texts TextFiles
	// Executors run the server-side tools, by tool type.
	Executors map[string]Executor
	// Concurrency is how many responses this node drives at once (default 64).
	Concurrency int
	// NC publishes the model's text as it comes on the response's live subject (Names.LiveSubject), for the face
	// that streams the response to send it before the item is committed; nil publishes nothing.
	NC     *nats.Conn
	Names  natsx.Names
	Logger *slog.Logger
}

// Loop drives responses.
type Loop struct{ cfg Config }

// New returns a loop; register its Handler.
func New(cfg Config) *Loop {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 64
	}
	if cfg.Executors == nil {
		cfg.Executors = map[string]Executor{}
	}
	return &Loop{cfg: cfg}
}

// Handler is the loop's reaction to the log: a response created. It drives the response to its end before it
// acknowledges the event, so the event stays with the consumer (and goes to another node) until the response
// ended; the runtime's heartbeats keep a long model call from being taken for a dead node.
func (l *Loop) Handler() runtime.Handler {
	return runtime.Handler{
		Name:        "responder",
		EventTypes:  []string{"response.created"},
		Handle:      func(ctx context.Context, e events.Envelope) error { return l.Drive(ctx, e.AggregateID, e.Sequence) },
		Concurrency: l.cfg.Concurrency,
		Prefetch:    1,
	}
}

// maxTurns bounds the model calls of one response (server tools called again and again).
const maxTurns = 16

// Drive moves a response on until it ended or ctx ends.
func (l *Loop) Drive(ctx context.Context, id string, atLeast uint64) error {
	rs := l.cfg.Responses
	s, err := rs.Load(ctx, id, atLeast)
	if err != nil {
		return err
	}
	// The history before the response (its chain of previous responses, or its conversation) does not change while
	// it runs (its own items join the conversation at its end): it is read once, at its first turn.
	var history []events.Item
	var files shown
	read := false
	for !s.Ended() && ctx.Err() == nil {
		switch {
		case s.Status == events.ResponseStatusQueued:
			s, err = rs.Start(ctx, s)
		case s.PendingEnd.Status != "":
			// The last turn decided the end: the conversation gets the items first, so a follow-up that reads it
			// after the end sees them.
			if err = rs.AppendToConversation(ctx, s); err == nil {
				s, err = rs.Finish(ctx, s, s.PendingEnd)
			}
		case len(s.PartialTurn()) > 0 || len(s.Interrupted()) > 0:
			s, err = l.closePartial(ctx, s)
		case s.Turns >= maxTurns:
			s, err = rs.Finish(ctx, s, response.End{Status: events.ResponseStatusIncomplete, Reason: "max_tool_calls"})
		default:
			if !read {
				if history, err = rs.History(ctx, s); err != nil {
					return err
				}
				if files, err = l.readFiles(ctx, s.Account, slices.Concat(history, s.Request.Input)); err != nil {
					return err
				}
				read = true
			}
			s, err = l.turn(ctx, s, history, files)
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// closePartial closes a turn whose items were recorded but not its close (see response.State.PartialTurn), or
// that started calls it did not record (response.State.Interrupted): those are recorded as interrupted, not made
// again, and the model reads that on the next turn.
func (l *Loop) closePartial(ctx context.Context, s response.State) (response.State, error) {
	var interrupted []events.Item
	for _, it := range s.Interrupted() {
		l.cfg.Logger.Warn("responder: a call was interrupted; it is not made again", "response", s.ID, "item", it.ID, "type", it.Type)
		interrupted = append(interrupted, response.Interrupt(it))
	}
	items := slices.Concat(s.PartialTurn(), interrupted)
	end := response.End{Status: events.ResponseStatusCompleted}
	for _, it := range items {
		if _, server := l.executorFor(it.Type); server || it.Type == "mcp_list_tools" {
			end = response.End{}
		}
	}
	if hasFunctionCall(items) {
		end = response.End{Status: events.ResponseStatusCompleted}
	}
	return l.cfg.Responses.RecordTurn(ctx, s, s.Turns, interrupted, events.TokenUsage{}, end, !s.JoinsConversation())
}

func (l *Loop) executorFor(itemType string) (Executor, bool) {
	for _, x := range l.cfg.Executors {
		if x.ItemType() == itemType {
			return x, true
		}
	}
	return nil, false
}

// turn asks the model once, with history before the response's own context, and records what it answered.
func (l *Loop) turn(ctx context.Context, s response.State, history []events.Item, files shown) (response.State, error) {
	rs := l.cfg.Responses
	step := s.Turns
	prep, prepEnd, err := l.prepare(ctx, s, history)
	if errors.Is(err, response.ErrNotStarted) {
		return rs.Load(ctx, s.ID, 0) // another delivery moved the turn on: the loop looks again
	}
	if err != nil {
		return s, err
	}
	if len(prep) > 0 || prepEnd.Status != "" {
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		return rs.RecordTurn(ctx, s, step, prep, events.TokenUsage{}, prepEnd, !s.JoinsConversation())
	}
	if tool, x, ok := l.offlineSearch(s); ok {
		return l.offlineFileSearch(ctx, s, history, tool, x)
	}
	p, err := l.plan(s, history, files)
	if err != nil {
		return rs.Finish(ctx, s, response.End{Status: events.ResponseStatusFailed, Code: "invalid_prompt", Message: err.Error()})
	}
	if p.spent {
		return rs.Finish(ctx, s, response.End{Status: events.ResponseStatusIncomplete, Reason: "max_output_tokens"})
	}
	var stop <-chan struct{}
	if s.Request.Background {
		// Only a background response can be cancelled: its model call stops when the cancel is in the log.
		ended, stopWatch := rs.Ending(ctx, s)
		defer stopWatch()
		stop = ended
	}
	chunks := chunker{live: l.live(s.ID, step), strip: p.stripper()}
	resp, err := turn.Ask(ctx, l.cfg.Models, p.req, stop, chunks.add)
	chunks.flush()
	switch {
	case ctx.Err() != nil:
		return s, ctx.Err()
	case errors.Is(err, turn.ErrStopped):
		return rs.Load(ctx, s.ID, 0) // cancelled: the loop sees the end
	case err != nil:
		l.cfg.Logger.Warn("responder: model call failed", "response", s.ID, "model", s.Request.Model, "err", err)
		return rs.Finish(ctx, s, response.End{Status: events.ResponseStatusFailed, Code: turn.FailureCode(err), Message: err.Error()})
	}
	usage := turn.Usage(resp.Usage)

	var items []events.Item
	if resp.Text != "" || len(resp.ToolCalls) == 0 {
		// The text is stripped whole, as its pieces were: they add up to it.
		text, cited := p.cited(resp.Text)
		items = append(items, events.Item{Type: "message", ID: response.ItemID(&s, step, len(items), "msg_"),
			Status: events.ResponseStatusCompleted, Role: "assistant",
			Content: []events.ItemContent{{Type: "output_text", Text: text, Annotations: cited}},
			Chunks:  chunks.Text()})
	}
	end := response.End{Status: events.ResponseStatusCompleted}
	if turn.CutShort(resp, p.capped) {
		end = response.End{Status: events.ResponseStatusIncomplete, Reason: "max_output_tokens"}
		if len(items) > 0 {
			items[0].Status = events.ResponseStatusIncomplete
		}
	}
	unprocessed := 0
	for i, c := range resp.ToolCalls {
		if tool, x, ok := p.server(c.Name); ok {
			if p.callsLeft == 0 {
				// Past max_tool_calls a call is not processed: the model answers from what the others gave.
				unprocessed++
				continue
			}
			if p.callsLeft > 0 {
				p.callsLeft--
			}
			id := response.ItemID(&s, step, len(items), itemPrefix(x.ItemType()))
			if st, ok := x.(Starter); ok {
				if started, ok := st.Started(tool, c, id); ok {
					if started.CallID == "" {
						started.CallID = c.ID
					}
					s, err = rs.RecordStart(ctx, s, step, started)
					if errors.Is(err, response.ErrNotStarted) {
						return rs.Load(ctx, s.ID, 0) // another delivery moved the turn on: the loop looks again
					}
					if err != nil {
						return s, err
					}
				}
			}
			it, err := x.Run(ctx, s, tool, c, id)
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			if err != nil {
				l.cfg.Logger.Warn("responder: tool failed", "response", s.ID, "tool", tool.Type, "err", err)
			}
			if it.CallID == "" {
				it.CallID = c.ID // kept so that the model reads the output under the call's own ID (not shown to clients)
			}
			items = append(items, it)
			end = response.End{} // the model reads what the tool gave on the next turn
			continue
		}
		callID := turn.CallID(c.ID, s.CreatedBy, fmt.Sprintf("turn-%d-call-%d", step, i))
		items = append(items, events.Item{Type: "function_call", ID: response.ItemID(&s, step, len(items), "fc_"),
			Status: events.ResponseStatusCompleted, CallID: callID, Name: c.Name, Arguments: c.Arguments,
			Chunks: chunks.Args(c.ID)})
	}
	if unprocessed > 0 && len(items) == 0 {
		// Every call the model made was past max_tool_calls, and it gave no answer: the response ends there.
		end = response.End{Status: events.ResponseStatusIncomplete, Reason: "max_tool_calls"}
	}
	if hasFunctionCall(items) && end.Status == "" {
		// A function call is the client's to answer: the response ends with it, whatever else the turn did.
		end = response.End{Status: events.ResponseStatusCompleted}
	}
	finish := !s.JoinsConversation()
	return rs.RecordTurn(ctx, s, step, items, usage, end, finish)
}

// offlineSearch returns the response's file_search tool and its executor when the offline model is to answer with
// it (see offlineFileSearch).
func (l *Loop) offlineSearch(s response.State) (events.ResponseTool, Executor, bool) {
	if s.Request.Model != llm.ProviderOffline {
		return events.ResponseTool{}, nil, false
	}
	for _, t := range s.Request.Tools {
		if x, ok := l.cfg.Executors[t.Type]; ok && t.Type == turn.FileSearch {
			return t, x, true
		}
	}
	return events.ResponseTool{}, nil, false
}

// offlineFileSearch answers a response of the offline model that has file_search as a run of it is answered
// (turn.OfflineAnswer): a first turn searches the files with the user's question, the next quotes the passage that
// best matches it, cited, or says that nothing in the files matches. It never writes an answer of its own.
func (l *Loop) offlineFileSearch(ctx context.Context, s response.State, history []events.Item, tool events.ResponseTool, x Executor) (response.State, error) {
	rs, step := l.cfg.Responses, s.Turns
	finish := !s.JoinsConversation()
	question := ""
	for _, it := range slices.Concat(history, s.Request.Input) {
		if (it.Type == "message" || it.Type == "") && it.Role == "user" {
			question = it.Text()
		}
	}
	var last *events.Item
	for i := range s.Output {
		if s.Output[i].Type == x.ItemType() {
			last = &s.Output[i]
		}
	}
	if last == nil {
		args, _ := json.Marshal(map[string][]string{"queries": {question}})
		it, err := x.Run(ctx, s, tool, llm.ToolCall{Name: turn.FileSearch, Arguments: string(args)},
			response.ItemID(&s, step, 0, itemPrefix(x.ItemType())))
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		if err != nil {
			l.cfg.Logger.Warn("responder: tool failed", "response", s.ID, "tool", tool.Type, "err", err)
		}
		return rs.RecordTurn(ctx, s, step, []events.Item{it}, events.TokenUsage{}, response.End{}, finish)
	}
	text := turn.OfflineAnswer(question, "of this response's vector stores", last.ID, x.Output(*last), last.Results)
	var cited []events.ItemAnnotation
	if c, ok := x.(Citer); ok {
		text, cited = plan{results: c.Results(s.Output)}.cited(text)
	}
	msg := events.Item{Type: "message", ID: response.ItemID(&s, step, 0, "msg_"), Status: events.ResponseStatusCompleted,
		Role: "assistant", Content: []events.ItemContent{{Type: "output_text", Text: text, Annotations: cited}}}
	return rs.RecordTurn(ctx, s, step, []events.Item{msg}, events.TokenUsage{}, response.End{Status: events.ResponseStatusCompleted}, finish)
}

// prepare gathers what the executors record before the model is asked, in the order of the tools. An error is
// the log's, or response.ErrNotStarted: a call is not to be made, the turn moved on.
func (l *Loop) prepare(ctx context.Context, s response.State, history []events.Item) ([]events.Item, response.End, error) {
	var items []events.Item
	context := slices.Concat(history, s.Request.Input, s.Output)
	step := s.Turns
	var failed error
	start := func(it events.Item) error {
		if failed != nil {
			return failed
		}
		next, err := l.cfg.Responses.RecordStart(ctx, s, step, it)
		if err != nil {
			failed = err
			return err
		}
		s = next
		return nil
	}
	for _, t := range s.Request.Tools {
		p, ok := l.cfg.Executors[t.Type].(Preparer)
		if !ok {
			continue
		}
		base := len(items)
		got, end := p.Prepare(ctx, s, t, context, func(i int, prefix string) string {
			return response.ItemID(&s, step, base+i, prefix)
		}, start)
		if failed != nil {
			return nil, response.End{}, failed
		}
		items = append(items, got...)
		if end.Status != "" {
			return items, end, nil
		}
	}
	return items, response.End{}, nil
}

// hasFunctionCall reports whether the turn's items wait for the client: a function call, or an MCP call that
// waits for the user's approval.
func hasFunctionCall(items []events.Item) bool {
	for _, it := range items {
		if it.Type == "function_call" || it.Type == "mcp_approval_request" {
			return true
		}
	}
	return false
}

// itemPrefix is the ID prefix of an item type.
func itemPrefix(typ string) string {
	switch typ {
	case "file_search_call":
		return "fs_"
	case "code_interpreter_call":
		return "ci_"
	case "mcp_call":
		return "mcp_"
	}
	return "item_"
}

// chunker keeps the pieces in which the model streamed its text and each call's arguments (the recorded item
// carries their lengths, so that a stream synthesised from the log splits them alike) and publishes each piece of
// the text live. With a stripper, the pieces are the text without its citing markers (a piece that may begin one
// is held until it is known).
type chunker struct {
	turn.Pieces
	live  func(index int, text string)
	strip *turn.Stripper
}

func (c *chunker) add(d llm.Delta) {
	text := d.Text
	if c.strip != nil && text != "" {
		text = c.strip.Write(text)
	}
	c.addText(text)
	if d.ToolCall != nil {
		c.AddCall(*d.ToolCall)
	}
}

// flush adds what the stripper still holds once the model's answer has ended.
func (c *chunker) flush() {
	if c.strip != nil {
		c.addText(c.strip.Flush())
	}
}

func (c *chunker) addText(text string) {
	if text == "" {
		return
	}
	if c.live != nil {
		c.live(len(c.Text()), text)
	}
	c.AddText(text)
}

// live returns what publishes a turn's text pieces on the response's live subject (nil: no connection). Core
// NATS: a piece nobody hears is lost, and the item committed after has them all.
func (l *Loop) live(id string, turn int) func(int, string) {
	if l.cfg.NC == nil {
		return nil
	}
	subject := l.cfg.Names.LiveSubject("response", id)
	return func(i int, text string) {
		raw, _ := json.Marshal(response.LiveDelta{Turn: turn, Index: i, Text: text})
		_ = l.cfg.NC.Publish(subject, raw) // best effort: the log has the text
	}
}

// outputText is a function_call_output's output as the model reads it: a JSON string's text, else the JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}
