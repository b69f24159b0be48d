package session

import (
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/events"
)

// describeJulep says in one line what a Julep session's event did, for replay: the turn's request, its prompt (the
// docs recalled with their scores, the history it kept), each model call and tool run, and its end; summaries.
func describeJulep(e events.Envelope) (string, bool) {
	switch d := e.Event.(type) {
	case events.SessionCreated:
		if d.Julep == nil {
			return "", false
		}
		line := "Julep session opened; agents " + strings.Join(d.Julep.Agents, ", ")
		if len(d.Julep.Users) > 0 {
			line += "; users " + strings.Join(d.Julep.Users, ", ")
		}
		if d.Julep.ContextOverflow != "" && d.Julep.TokenBudget != nil {
			line += fmt.Sprintf("; %s at %d tokens", d.Julep.ContextOverflow, *d.Julep.TokenBudget)
		}
		return line, true
	case events.SessionJulepUpdated:
		return "Julep session settings changed", true
	case events.SessionChatRequested:
		last := ""
		if n := len(d.Messages); n > 0 {
			last = fmt.Sprintf("%s: %q", d.Messages[n-1].Role, clip(d.Messages[n-1].Content, 60))
		}
		flags := []string{}
		if d.Save {
			flags = append(flags, "save")
		}
		if d.Recall {
			flags = append(flags, "recall")
		}
		if d.Stream {
			flags = append(flags, "stream")
		}
		return fmt.Sprintf("chat %s → agent %s (%d messages; %s) %s", d.TurnID, d.Agent, len(d.Messages),
			strings.Join(flags, ", "), last), true
	case events.SessionChatPrepared:
		line := fmt.Sprintf("rendered for %s: %d prompt tokens, history from entry %d", nonEmpty(d.Model, "the default model"),
			d.PromptTokens, d.HistoryFrom)
		if d.SummaryUpto > 0 {
			line += fmt.Sprintf(", summary of the first %d", d.SummaryUpto)
		}
		if d.Dropped > 0 {
			line += fmt.Sprintf(", %d truncated", d.Dropped)
		}
		if len(d.Docs) > 0 {
			refs := make([]string, 0, 3)
			for i, r := range d.Docs {
				if i == 3 {
					refs = append(refs, fmt.Sprintf("+%d", len(d.Docs)-3))
					break
				}
				refs = append(refs, fmt.Sprintf("%q %.2f", clip(r.Title, 30), r.Score))
			}
			line += "; recalled " + strings.Join(refs, ", ")
		} else if d.RecallQuery != "" {
			line += "; recalled nothing"
		}
		return line, true
	case events.SessionChatModelCalled:
		return fmt.Sprintf("model call %d asks for %s", d.Call+1, callNames(d.ToolCalls)), true
	case events.SessionChatToolRan:
		if d.Error != "" {
			return fmt.Sprintf("%s tool %s failed: %s", d.Type, d.Name, clip(d.Error, 60)), true
		}
		return fmt.Sprintf("%s tool %s → %s", d.Type, d.Name, clip(d.Output, 60)), true
	case events.SessionChatAnswered:
		if len(d.ToolCalls) > 0 {
			return fmt.Sprintf("answer %s: calls %s for the client (%d tokens)", d.TurnID, callNames(d.ToolCalls), d.Usage.TotalTokens), true
		}
		return fmt.Sprintf("answer %s: %q (%d tokens, %s)", d.TurnID, clip(d.Text, 60), d.Usage.TotalTokens, nonEmpty(d.Finish, "stop")), true
	case events.SessionChatFailed:
		return fmt.Sprintf("chat %s failed: %s", d.TurnID, clip(d.Error, 80)), true
	case events.SessionSummarized:
		return fmt.Sprintf("summarized the first %d entries: %d tokens → %d", d.Upto, d.TokensBefore, d.TokensAfter), true
	case events.SessionSummaryFailed:
		return fmt.Sprintf("no summary of entries %d to %d: %s; the older turns stay, truncated when over the budget",
			d.From, d.Upto, d.Reason), true
	}
	return "", false
}

func callNames(calls []events.JulepToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
