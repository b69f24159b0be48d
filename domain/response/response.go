// Package response is the response aggregate of the Responses API: the request, the output items its model loop
// recorded turn by turn, and its end. It holds the state, the one fold of response events, and the pure decisions
// of the loop (what a turn records, how a response ends, cancel, delete): the commands load and append, the
// handler (handlers/responder) asks the model, this package decides.
//
// It imports events only.
package response

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
)

// State is a response rebuilt from its events.
type State struct {
	ID      string
	Account string
	Exists  bool
	Deleted bool
	Request events.ResponseCreated
	// CreatedAt and CompletedAt are when the response was created and when it ended.
	CreatedAt   time.Time
	CompletedAt time.Time
	Status      string
	Output      []events.Item
	// outputTurns is the turn of each output item.
	outputTurns []int
	// started are the server tool calls the current turn recorded as started (ResponseCallStarted). They are
	// dropped when the turn is recorded: CallStarted and Interrupted ask only about the current turn (a call's item
	// ID derives from its turn, so no call of a later turn has the ID of an earlier one's, and a call is started
	// only in the current turn), and a loop driving the response again after a crash starts from the current turn
	// too.
	started []events.Item
	// Turns counts the model calls recorded (each closed by ResponseTurnRecorded).
	Turns int
	Usage events.TokenUsage
	// ErrorCode and ErrorMessage say why a failed response failed; IncompleteReason why an incomplete one stopped.
	ErrorCode        string
	ErrorMessage     string
	IncompleteReason string
	// PendingEnd is how the last turn ends the response, until the end is recorded.
	PendingEnd End
	// CreatedBy is the ID of the creating event: the cause the loop's event IDs derive from.
	CreatedBy string
	Seq       uint64
}

// Clone copies the state so that folding more events into either copy leaves the other alone.
func (s *State) Clone() State {
	out := *s
	out.Output = slices.Clip(s.Output)
	out.outputTurns = slices.Clip(s.outputTurns)
	out.started = slices.Clip(s.started)
	return out
}

// Apply folds one event.
func (s *State) Apply(e events.Envelope) {
	s.Seq = e.Sequence
	switch d := e.Event.(type) {
	case events.ResponseCreated:
		s.ID, s.Account, s.Exists, s.Request, s.CreatedAt, s.CreatedBy = e.AggregateID, e.Account, true, d, e.Time, e.ID
		s.Status = events.ResponseStatusInProgress
		if d.Background {
			s.Status = events.ResponseStatusQueued
		}
	case events.ResponseStarted:
		if s.Status == events.ResponseStatusQueued {
			s.Status = events.ResponseStatusInProgress
		}
	case events.ResponseItemAdded:
		s.Output = append(s.Output, d.Item)
		s.outputTurns = append(s.outputTurns, d.Turn)
	case events.ResponseCallStarted:
		if d.Turn == s.Turns { // CallStarted records a call in the current turn only
			s.started = append(s.started, d.Item)
		}
	case events.ResponseTurnRecorded:
		s.Turns = d.Turn + 1
		s.started = nil
		s.Usage = s.Usage.Add(d.Usage)
		s.PendingEnd = End{Status: d.End, Reason: d.Reason}
	case events.ResponseCompleted:
		s.end(e, events.ResponseStatusCompleted)
	case events.ResponseIncomplete:
		s.end(e, events.ResponseStatusIncomplete)
		s.IncompleteReason = d.Reason
	case events.ResponseFailed:
		s.end(e, events.ResponseStatusFailed)
		s.ErrorCode, s.ErrorMessage = d.Code, d.Message
	case events.ResponseCancelled:
		s.end(e, events.ResponseStatusCancelled)
	case events.ResponseDeleted:
		s.Deleted = true
	}
}

func (s *State) end(e events.Envelope, status string) {
	s.Status, s.CompletedAt = status, e.Time
}

// Ended reports whether the response reached a terminal status (or is gone): nothing more is recorded for it.
func (s *State) Ended() bool {
	return !s.Exists || Terminal(s.Status)
}

// Terminal reports whether a status ends a response.
func Terminal(status string) bool {
	switch status {
	case events.ResponseStatusCompleted, events.ResponseStatusIncomplete, events.ResponseStatusFailed, events.ResponseStatusCancelled:
		return true
	}
	return false
}

// Owned reports whether the response exists, is not deleted and is account's.
func (s *State) Owned(account string) bool {
	return s.Exists && !s.Deleted && s.Account == account
}

// JoinsConversation reports whether the response's input and output are appended to its conversation once it
// ends: it names one, and is kept (store: false writes nothing there). One that does not is finished with its last
// turn; one that does, after the append.
func (s *State) JoinsConversation() bool {
	return s.Request.ConversationID != "" && s.Request.Store
}

// Retrievable reports whether account may read the response: its own, kept (store), not deleted.
func (s *State) Retrievable(account string) bool {
	return s.Owned(account) && s.Request.Store
}

// Context is what the response hands on to a response that names it as previous_response_id: its input, then its
// output (instructions are not carried over).
func (s *State) Context() []events.Item {
	return slices.Concat(s.Request.Input, s.Output)
}

// PartialTurn returns the items the current turn recorded before it was interrupted, its close missing (a log
// that appends a decision's events one by one, on one node, can stop between them): the loop closes that turn from
// them rather than ask the model again, so no item is recorded twice.
func (s *State) PartialTurn() []events.Item {
	var out []events.Item
	for i, t := range s.outputTurns {
		if t == s.Turns {
			out = append(out, s.Output[i])
		}
	}
	return out
}

// Interrupted returns the calls the current turn started (ResponseCallStarted) that no item records yet: the loop
// stopped between a call's start and the record of its turn (a crash, a node stopped). Each may have run, so none
// is made again: the loop records them as Interrupt makes them.
func (s *State) Interrupted() []events.Item {
	var out []events.Item
	for _, c := range s.started {
		if !slices.ContainsFunc(s.Output, func(o events.Item) bool { return o.ID == c.ID }) {
			out = append(out, c)
		}
	}
	return out
}

// InterruptedError is the error an interrupted call is recorded with; the model reads it as the call's output.
const InterruptedError = events.InterruptedCallError

// Interrupt is the item an interrupted call records: failed, with InterruptedError (a code_interpreter_call's model
// reads its logs, so they say it too).
func Interrupt(it events.Item) events.Item {
	it.Status, it.Error = events.ResponseStatusFailed, InterruptedError
	if it.Type == "code_interpreter_call" {
		it.Outputs = append(slices.Clip(it.Outputs), events.CodeOutput{Type: "logs", Logs: InterruptedError})
	}
	return it
}

// ErrNotStarted says a call is not to be made: CallStarted recorded nothing for it.
var ErrNotStarted = errors.New("the call is not to be made: its turn moved on, or it was started already")

// CallStarted is what records that the call it (its ID derived from the turn) is about to be made in turn, and
// whether the caller may make it: not when the turn was recorded already, the response ended, or the call was
// started already (by a loop that stopped, or one that still runs elsewhere): a call is made at most once.
func CallStarted(s *State, turn int, it events.Item) ([]events.Event, bool) {
	if s.Status != events.ResponseStatusInProgress || s.Turns != turn {
		return nil, false
	}
	if slices.ContainsFunc(s.started, func(c events.Item) bool { return c.ID == it.ID }) {
		return nil, false
	}
	it.Status = events.ResponseStatusInProgress
	id := events.DeriveID(s.CreatedBy, fmt.Sprintf("turn-%d-start-%s", turn, it.ID))
	return []events.Event{events.WithID(id, events.ResponseCallStarted{Item: it, Turn: turn})}, true
}

// Start is what puts a queued response in progress; nothing for one in any other status.
func Start(s *State) []events.Event {
	if s.Status != events.ResponseStatusQueued {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(s.CreatedBy, "started"), events.ResponseStarted{})}
}

// ItemID is the ID of the index'th item a turn records, with its type's prefix.
func ItemID(s *State, turn, index int, prefix string) string {
	return prefix + events.DeriveID(s.CreatedBy, fmt.Sprintf("turn-%d-item-%d", turn, index))
}

// End says how a turn ends the response, when it does: "" goes on to another turn.
type End struct {
	// Status is the terminal status: completed, incomplete or failed.
	Status  string
	Reason  string
	Code    string
	Message string
}

// Turn is what a model call records: its items, the close of the turn with its usage and how it ends the response,
// and with finish the end itself. A turn recorded already (a redelivery), or a response that ended, records
// nothing. Items follow those the turn recorded before it was interrupted (PartialTurn), if any; one of those
// given again is not recorded twice.
func Turn(s *State, turn int, items []events.Item, usage events.TokenUsage, end End, finish bool) []events.Event {
	if s.Ended() || s.Status != events.ResponseStatusInProgress || s.Turns != turn {
		return nil
	}
	var evs []events.Event
	add := func(label string, e events.Event) {
		evs = append(evs, events.WithID(events.DeriveID(s.CreatedBy, fmt.Sprintf("turn-%d-%s", turn, label)), e))
	}
	partial := s.PartialTurn()
	n := len(partial)
	for _, it := range items {
		if it.ID != "" && slices.ContainsFunc(partial, func(p events.Item) bool { return p.ID == it.ID }) {
			continue // recorded already, by a loop that stopped before the turn's close
		}
		add(fmt.Sprintf("item-%d", n), events.ResponseItemAdded{Item: it, Turn: turn})
		n++
	}
	add("recorded", events.ResponseTurnRecorded{Turn: turn, Usage: usage, End: end.Status, Reason: end.Reason})
	if end.Status != "" && finish {
		evs = append(evs, Finish(s, usage, end)...)
	}
	return evs
}

// Finish is what ends the response in progress with end; extra is usage not yet folded into the state.
func Finish(s *State, extra events.TokenUsage, end End) []events.Event {
	if s.Ended() {
		return nil
	}
	total := s.Usage.Add(extra)
	var e events.Event
	switch end.Status {
	case events.ResponseStatusIncomplete:
		e = events.ResponseIncomplete{Reason: end.Reason, Usage: total}
	case events.ResponseStatusFailed:
		e = events.ResponseFailed{Code: end.Code, Message: end.Message, Usage: total}
	default:
		e = events.ResponseCompleted{Usage: total}
	}
	return []events.Event{events.WithID(events.DeriveID(s.CreatedBy, "end"), e)}
}

// Cancel is what a client's cancel records: a response in progress or queued ends cancelled; an ended one records
// nothing (OpenAI answers such a cancel with the response as it is).
func Cancel(s *State) []events.Event {
	if s.Ended() {
		return nil
	}
	return []events.Event{events.WithID(events.DeriveID(s.CreatedBy, "end"), events.ResponseCancelled{Usage: s.Usage})}
}

// Delete is what deleting the response records.
func Delete(s *State) []events.Event {
	if s.Deleted {
		return nil
	}
	return []events.Event{events.ResponseDeleted{}}
}

// LiveDelta is a piece of a turn's text as the model gives it, before the turn's message is committed: the
// Index'th piece of turn Turn. The loop publishes it on the response's live subject; a face streaming the response
// sends it at once, as the frames the committed message will give (its first item, its pieces as recorded).
type LiveDelta struct {
	Turn  int    `json:"turn"`
	Index int    `json:"i"`
	Text  string `json:"d"`
}
