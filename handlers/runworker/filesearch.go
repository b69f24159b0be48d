package runworker

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// FileSearcher runs a run's file_search calls over the vector stores of its assistant and its thread.
type FileSearcher interface {
	// SearchRunFiles searches the stores of the assistant's and the thread's tool_resources, and the files the
	// thread's messages attach for file_search (attached).
	SearchRunFiles(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
		queries []string, limit int, threshold float64) ([]events.FileSearchResult, error)
}

// FileSearchTool is how file_search is offered to the model, by runs and responses alike: a function the worker
// answers. Its description tells the model how to cite, which the final message's annotations are made from.
var FileSearchTool = llm.Tool{
	Name: thread.FileSearchTool,
	Description: "Search the files the user and the assistant have provided. Each result starts with a marker such " +
		"as 【0:1†manual.pdf】; when you use a result, cite it by copying its marker into your answer. If nothing " +
		"relevant is found, say so rather than answer from memory.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"queries":{"type":"array","items":{"type":"string"},` +
		`"description":"One or more search queries, each a complete question or phrase."}},"required":["queries"]}`),
}

// fileSearchOf returns the run's file_search tool, if it has one.
func fileSearchOf(r *thread.Run) (events.Tool, bool) {
	for _, t := range r.Tools {
		if t.Type == "file_search" {
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
			if c.Type == "file_search" {
				out = append(out, c)
			}
		}
	}
	return out
}

// fileSearch answers the turn's file_search calls and records them; the run goes on to its next turn.
func (w *Worker) fileSearch(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, turn string,
	tool events.Tool, calls []llm.ToolCall, usage events.TokenUsage) (*thread.State, error) {
	limit, threshold, ranker := 20, 0.0, "auto"
	if o := tool.FileSearch; o != nil {
		if o.MaxNumResults > 0 {
			limit = o.MaxNumResults
		}
		if o.RankingOptions != nil {
			threshold = o.RankingOptions.ScoreThreshold
			if o.RankingOptions.Ranker != "" {
				ranker = o.RankingOptions.Ranker
			}
		}
	}
	n := len(searchCalls(t, r))
	var recorded []events.ToolCall
	var outputs []events.ToolOutput
	for i, c := range calls {
		id := callID(turn, i, c.ID)
		call := events.ToolCall{ID: id, Type: "file_search", Name: c.Name, Arguments: c.Arguments,
			FileSearch: &events.FileSearchCall{Ranker: ranker, ScoreThreshold: threshold, Results: []events.FileSearchResult{}}}
		var out string
		queries, err := SearchQueries(c.Arguments)
		if err == nil {
			call.FileSearch.Results, err = w.cfg.Files.SearchRunFiles(ctx, ref.Account, ref.ThreadID, r.AssistantID, t.ToolResources,
				t.AttachedFiles("file_search"), queries, limit, threshold)
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			out = "file_search failed: " + err.Error()
			call.FileSearch.Results = []events.FileSearchResult{}
		case len(call.FileSearch.Results) == 0:
			out = "file_search found nothing in the files that matches these queries."
		default:
			var b strings.Builder
			for j, res := range call.FileSearch.Results {
				fmt.Fprintf(&b, "【%d:%d†%s】\n%s\n\n", n, j, res.FileName, res.Text)
			}
			out = b.String()
		}
		n++
		recorded = append(recorded, call)
		outputs = append(outputs, events.ToolOutput{ToolCallID: id, Output: out})
	}
	return w.cfg.Runs.RecordServerTools(ctx, ref, t, turn, recorded, outputs, usage)
}

// SearchQueries reads a file_search call's arguments: {"queries": [...]}, or {"query": "..."} as some models write.
func SearchQueries(args string) ([]string, error) {
	var a struct {
		Queries []string `json:"queries"`
		Query   string   `json:"query"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return nil, fmt.Errorf("the call's arguments are not the JSON object {\"queries\": [...]}: %v", err)
	}
	if a.Query != "" {
		a.Queries = append(a.Queries, a.Query)
	}
	if len(a.Queries) == 0 {
		return nil, fmt.Errorf("the call gives no queries")
	}
	return a.Queries, nil
}

// citation is a marker the model copied from a file_search result: 【call:index†name】.
var citation = regexp.MustCompile(`【(\d+):(\d+)†[^】]*】`)

// citations turns the markers of a text into file_citation annotations, for the results the run's file_search
// calls found. A marker naming no result is left as text, not made into a citation of some file.
func citations(text string, calls []events.ToolCall) []events.Annotation {
	var out []events.Annotation
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		call, _ := strconv.Atoi(text[m[2]:m[3]])
		index, _ := strconv.Atoi(text[m[4]:m[5]])
		if call >= len(calls) || calls[call].FileSearch == nil || index >= len(calls[call].FileSearch.Results) {
			continue
		}
		start := utf8.RuneCountInString(text[:m[0]])
		out = append(out, events.Annotation{Type: "file_citation", Text: text[m[0]:m[1]], StartIndex: start,
			EndIndex: start + utf8.RuneCountInString(text[m[0]:m[1]]), FileID: calls[call].FileSearch.Results[index].FileID})
	}
	return out
}
