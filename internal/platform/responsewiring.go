package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/responder"
	"github.com/contrailhq/contrail/handlers/runworker"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
)

// responseExecutors are the server-side tools the Responses API's model loop runs on this node, by tool type: the
// seam where a tool kind (file_search, code_interpreter, mcp) plugs in.
func (p *Platform) responseExecutors() map[string]responder.Executor {
	out := map[string]responder.Executor{}
	if p.Vectors != nil {
		out["file_search"] = responseFiles{p}
	}
	return out
}

// responseTools are the server-side tool types the /v1 face accepts in a response's tools.
func (p *Platform) responseTools() map[string]bool {
	out := map[string]bool{}
	for typ := range p.responseExecutors() {
		out[typ] = true
	}
	return out
}

// responseFiles runs a response's file_search calls over the vector stores its tool names (the account's own: the
// face checked them when the response was made, and they are read as the response's account here again).
type responseFiles struct{ p *Platform }

func (responseFiles) ItemType() string { return "file_search_call" }

func (responseFiles) Offer(events.ResponseTool) (llm.Tool, bool) {
	t := runworker.FileSearchTool
	t.Description = "Search the files the user has provided. Each result starts with a marker such as " +
		"【fs_1:0†manual.pdf】; when you use a result, cite it by copying its marker into your answer. If nothing " +
		"relevant is found, say so rather than answer from memory."
	return t, true
}

func (f responseFiles) Run(ctx context.Context, s response.State, tool events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, error) {
	it := events.Item{Type: "file_search_call", ID: itemID, Status: events.ResponseStatusCompleted, Results: []events.FileSearchResult{}}
	queries, err := runworker.SearchQueries(call.Arguments)
	if err != nil {
		it.Status = events.ResponseStatusFailed
		return it, err
	}
	it.Queries = queries
	results, err := f.search(ctx, s.Account, tool, queries)
	if err != nil {
		it.Status = events.ResponseStatusFailed
		return it, err
	}
	it.Results = results
	return it, nil
}

func (f responseFiles) search(ctx context.Context, account string, tool events.ResponseTool, queries []string) ([]events.FileSearchResult, error) {
	actor := auth.Principal{AccountID: account}
	var stores []vectorstore.State
	for _, id := range tool.VectorStoreIDs {
		s, err := f.p.Vectors.Commands.Get(ctx, actor, id)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since the response was made
		}
		if err != nil {
			return nil, err
		}
		stores = append(stores, s)
	}
	if len(stores) == 0 {
		return nil, nil
	}
	req := commands.SearchRequest{Queries: queries, Limit: 20}
	if tool.MaxNumResults > 0 {
		req.Limit = tool.MaxNumResults
	}
	if len(tool.Filters) > 0 {
		filter, err := docindex.ParseFilter(tool.Filters, "filters")
		if err != nil {
			return nil, err
		}
		req.Filter = filter
	}
	if len(tool.RankingOptions) > 0 {
		var ro struct {
			ScoreThreshold float64 `json:"score_threshold"`
		}
		if json.Unmarshal(tool.RankingOptions, &ro) == nil {
			req.MinScore = ro.ScoreThreshold
		}
	}
	hits, err := f.p.Vectors.Commands.SearchStores(ctx, stores, req)
	if err != nil {
		return nil, err
	}
	out := make([]events.FileSearchResult, len(hits))
	for i, h := range hits {
		out[i] = events.FileSearchResult{FileID: h.FileID, FileName: h.Filename, Score: h.Score, Text: h.Text}
	}
	return out, nil
}

// Output is what the model reads of a search: each result under its marker.
func (responseFiles) Output(it events.Item) string {
	if it.Status == events.ResponseStatusFailed {
		return "file_search failed."
	}
	if len(it.Results) == 0 {
		return "file_search found nothing in the files that matches these queries."
	}
	var b strings.Builder
	for j, r := range it.Results {
		fmt.Fprintf(&b, "【%s:%d†%s】\n%s\n\n", it.ID, j, r.FileName, r.Text)
	}
	return b.String()
}

// marker is a citation the model copied from a search result: 【<item>:<index>†<file name>】.
var marker = regexp.MustCompile(`【([A-Za-z0-9_-]+):(\d+)†[^】]*】`)

// Cite turns the markers of a text into file_citation annotations for the results the response's searches found;
// index is where the marker begins in the text, in characters. A marker naming no result is left as text.
func (responseFiles) Cite(text string, items []events.Item) []events.ItemAnnotation {
	byID := map[string]events.Item{}
	for _, it := range items {
		if it.Type == "file_search_call" {
			byID[it.ID] = it
		}
	}
	var out []events.ItemAnnotation
	for _, m := range marker.FindAllStringSubmatchIndex(text, -1) {
		it, ok := byID[text[m[2]:m[3]]]
		var j int
		_, _ = fmt.Sscan(text[m[4]:m[5]], &j)
		if !ok || j >= len(it.Results) {
			continue
		}
		r := it.Results[j]
		out = append(out, events.ItemAnnotation{Type: "file_citation", FileID: r.FileID, Filename: r.FileName,
			Index: utf8.RuneCountInString(text[:m[0]])})
	}
	return out
}
