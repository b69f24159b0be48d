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

// FileSearcher runs a run's file_search calls over the vector stores of its assistant and its thread.
type FileSearcher interface {
	// SearchRunFiles searches the stores of the assistant's and the thread's tool_resources, and the files the
	// thread's messages attach for file_search (attached).
	SearchRunFiles(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
		queries []string, limit int, threshold float64) ([]events.FileSearchResult, error)
}

// fileSearchTool is how a run offers file_search: its markers name a call by its place among the run's searches.
var fileSearchTool = turn.FileSearchTool("【0:1†manual.pdf】")

// fileSearchOf returns the run's file_search tool, if it has one.
func fileSearchOf(r *thread.Run) (events.Tool, bool) {
	for _, t := range r.Tools {
		if t.Type == turn.FileSearch {
			return t, true
		}
	}
	return events.Tool{}, false
}

// hasTool reports whether the run has a tool of a type.
func hasTool(r *thread.Run, typ string) bool {
	for _, t := range r.Tools {
		if t.Type == typ {
			return true
		}
	}
	return false
}

// searchCalls returns the run's file_search calls so far, in order: a citation's first number is a place in it.
func searchCalls(t *thread.State, r *thread.Run) []events.ToolCall {
	var out []events.ToolCall
	for _, id := range r.Steps {
		for _, c := range t.Steps[id].ToolCalls {
			if c.Type == turn.FileSearch {
				out = append(out, c)
			}
		}
	}
	return out
}

// fileSearch answers the turn's file_search calls and records them; the run goes on to its next turn.
func (w *Worker) fileSearch(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, step string,
	tool events.Tool, calls []llm.ToolCall, usage events.TokenUsage) (*thread.State, error) {
	limit, threshold, ranker := 0, 0.0, ""
	if o := tool.FileSearch; o != nil {
		limit = o.MaxNumResults
		if ro := o.RankingOptions; ro != nil {
			threshold, ranker = ro.ScoreThreshold, ro.Ranker
		}
	}
	opts := turn.NewSearchOptions(limit, threshold, ranker)
	n := len(searchCalls(t, r))
	var recorded []events.ToolCall
	var outputs []events.ToolOutput
	for i, c := range calls {
		id := callID(step, i, c.ID)
		call := events.ToolCall{ID: id, Type: turn.FileSearch, Name: c.Name, Arguments: c.Arguments,
			FileSearch: &events.FileSearchCall{Ranker: opts.Ranker, ScoreThreshold: opts.Threshold, Results: []events.FileSearchResult{}}}
		queries, err := turn.SearchQueries(c.Arguments)
		if err == nil {
			call.FileSearch.Results, err = w.cfg.Files.SearchRunFiles(ctx, ref.Account, ref.ThreadID, r.AssistantID, t.ToolResources,
				t.AttachedFiles(turn.FileSearch), queries, opts.Limit, opts.Threshold)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out := turn.SearchReport(strconv.Itoa(n), call.FileSearch.Results)
		if err != nil {
			out = turn.SearchFailure(err)
			call.FileSearch.Results = []events.FileSearchResult{}
		}
		n++
		recorded = append(recorded, call)
		outputs = append(outputs, events.ToolOutput{ToolCallID: id, Output: out})
	}
	return w.cfg.Runs.RecordServerTools(ctx, ref, t, step, recorded, outputs, usage)
}

// citations turns the markers of a text into file_citation annotations (with the marker's text and range, as the
// Assistants API gives them), for the results the run's file_search calls found.
func citations(text string, calls []events.ToolCall) []events.Annotation {
	var out []events.Annotation
	for _, c := range turn.Citations(text, func(key string) []events.FileSearchResult {
		n, err := strconv.Atoi(key)
		if err != nil || n < 0 || n >= len(calls) || calls[n].FileSearch == nil {
			return nil
		}
		return calls[n].FileSearch.Results
	}) {
		out = append(out, events.Annotation{Type: "file_citation", Text: c.Text, StartIndex: c.Start, EndIndex: c.End,
			FileID: c.Result.FileID})
	}
	return out
}
