package runworker

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
)

// offlineFileSearch answers a run of the offline model that has file_search the only honest way it can: it
// searches the files with the user's question, then quotes the passage that best matches it, cited, or says that
// nothing in the files matches (turn.OfflineAnswer).
func (w *Worker) offlineFileSearch(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, step string,
	tool events.Tool) (*thread.State, error) {
	question := lastUserText(t)
	calls := searchCalls(t, r)
	if len(calls) == 0 {
		args, _ := json.Marshal(map[string][]string{"queries": {question}})
		return w.fileSearch(ctx, ref, t, r, step, tool, []llm.ToolCall{{Name: turn.FileSearch, Arguments: string(args)}}, events.TokenUsage{})
	}
	n := len(calls) - 1
	last := calls[n]
	text := turn.OfflineAnswer(question, "of this assistant and thread", strconv.Itoa(n), stepOutput(t, r, last.ID),
		last.FileSearch.Results)
	return w.cfg.Runs.RecordTurn(ctx, ref, t, step, thread.TurnResult{Text: text, Annotations: citations(text, calls)})
}

// lastUserText is the text of the thread's last user message.
func lastUserText(t *thread.State) string {
	live := t.Live()
	for i := len(live) - 1; i >= 0; i-- {
		if live[i].Role == "user" {
			return live[i].Text()
		}
	}
	return ""
}

// stepOutput is the output recorded for a call of the run.
func stepOutput(t *thread.State, r *thread.Run, callID string) string {
	for _, id := range r.Steps {
		if out, ok := t.Steps[id].Outputs[callID]; ok {
			return out
		}
	}
	return ""
}
