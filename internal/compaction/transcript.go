package compaction

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/events"
)

// ItemType is the type of the item that carries a sealed summary.
const ItemType = "compaction"

// Prompt is the system message of the compaction request: what the summary must keep for the conversation to go
// on without the items it stands for.
const Prompt = "You compact a conversation between a user and an AI assistant so that it can continue without the " +
	"earlier messages. Write a summary, in the conversation's language, that keeps every fact, name, number, " +
	"decision, preference and open question the assistant will need, what the tools were asked and what they " +
	"answered, and what the user asked last and whether it was answered. Write only the summary: no preamble, " +
	"no advice, nothing that was not in the conversation."

// ContextText is how a summary is shown to the model in a later request, in place of the items it stands for.
func ContextText(summary string) string {
	return "Summary of the earlier conversation (it was compacted; the messages it stands for are no longer " +
		"shown):\n" + summary
}

// Transcript is the conversation handed to the model to summarize: the instructions the assistant followed, if
// any, then each item as a line saying who said or did what. A compaction item (already opened: its text is the
// summary) is the summary of what came before it.
func Transcript(instructions string, items []events.Item) string {
	var b strings.Builder
	if instructions != "" {
		fmt.Fprintf(&b, "The assistant's instructions:\n%s\n\nThe conversation:\n", instructions)
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			role := it.Role
			if role == "" {
				role = "user"
			}
			if t := it.Text(); t != "" {
				fmt.Fprintf(&b, "%s: %s\n", role, t)
			}
		case "function_call":
			fmt.Fprintf(&b, "assistant called the tool %s with %s (call %s)\n", it.Name, it.Arguments, it.CallID)
		case "function_call_output":
			fmt.Fprintf(&b, "the tool answered call %s: %s\n", it.CallID, outputText(it.Output))
		case "mcp_call":
			fmt.Fprintf(&b, "assistant called %s on %s with %s; it answered: %s\n", it.Name, it.ServerLabel, it.Arguments, outputText(it.Output))
		case ItemType:
			fmt.Fprintf(&b, "summary of the conversation before this point: %s\n", it.Text())
		case "file_search_call":
			fmt.Fprintf(&b, "assistant searched the files for %s\n", strings.Join(it.Queries, "; "))
		case "code_interpreter_call":
			fmt.Fprintf(&b, "assistant ran code:\n%s\n", it.Code)
		}
	}
	return b.String()
}

// outputText is a tool output's text: a JSON string as it is, anything else (content parts) as its JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
