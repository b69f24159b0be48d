package turn

import (
	"slices"

	"github.com/contrailhq/contrail/internal/llm"
)

// Entry is a piece of the context the model reads that stays whole: a message, or an assistant's tool calls with
// their outputs (a model refuses an output whose call is gone). Droppable marks what truncation may drop: the
// conversation's messages, as opposed to the tool calls of the run in progress.
type Entry struct {
	Messages  []llm.Message
	Droppable bool
}

// Group cuts messages into droppable entries: each message begins one, and a tool message joins the entry of the
// call before it.
func Group(msgs []llm.Message) []Entry {
	var out []Entry
	for _, m := range msgs {
		if m.Role == llm.RoleTool && len(out) > 0 {
			last := &out[len(out)-1]
			last.Messages = append(last.Messages, m)
			continue
		}
		out = append(out, Entry{Messages: []llm.Message{m}, Droppable: true})
	}
	return out
}

// Flatten is the messages of entries, in order.
func Flatten(entries []Entry) []llm.Message {
	var out []llm.Message
	for _, e := range entries {
		out = append(out, e.Messages...)
	}
	return out
}

// KeepLast keeps the n most recent droppable entries, and every other.
func KeepLast(entries []Entry, n int) []Entry {
	kept := make([]Entry, 0, len(entries))
	seen := 0
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Droppable {
			if seen >= n {
				continue
			}
			seen++
		}
		kept = append(kept, e)
	}
	slices.Reverse(kept)
	return kept
}

// DropOldest removes the oldest droppable entry unless it is the last one left: the newest message always stays.
// It reports whether it removed one.
func DropOldest(entries *[]Entry) bool {
	droppable, first := 0, -1
	for i, e := range *entries {
		if e.Droppable {
			droppable++
			if first < 0 {
				first = i
			}
		}
	}
	if droppable <= 1 {
		return false
	}
	*entries = slices.Delete(*entries, first, first+1)
	return true
}
