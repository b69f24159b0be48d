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
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/responder"
	"github.com/contrailhq/contrail/handlers/runworker"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/sandbox"
)

// responseExecutors are the server-side tools the Responses API's model loop runs on this node, by tool type: the
// seam where a tool kind (file_search, code_interpreter, mcp) plugs in.
func (p *Platform) responseExecutors() map[string]responder.Executor {
	out := map[string]responder.Executor{}
	if p.Vectors != nil {
		out["file_search"] = responseFiles{p}
	}
	if p.code != nil {
		out["code_interpreter"] = responseCode{p}
	}
	if p.MCP != nil {
		out["mcp"] = responseMCP{p}
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

// responseCode runs a response's code_interpreter calls in the sandbox of its container: one named by the tool,
// or one made for the response ({"type": "auto", "file_ids"}, its ID derived from the response). The container's
// files are at /mnt/data; what the code writes is saved as the account's files and added to the container.
type responseCode struct{ p *Platform }

func (responseCode) ItemType() string { return "code_interpreter_call" }

func (c responseCode) Offer(events.ResponseTool) (llm.Tool, bool) {
	return runworker.CodeTool, true
}

// containerOf reads the tool's container: an ID, or {"type": "auto", "file_ids": [...]}.
func containerOf(raw json.RawMessage) (id string, auto bool, fileIDs []string) {
	if json.Unmarshal(raw, &id) == nil {
		return id, false, nil
	}
	var o struct {
		Type    string   `json:"type"`
		FileIDs []string `json:"file_ids"`
	}
	_ = json.Unmarshal(raw, &o) // checked by the face
	return "", true, o.FileIDs
}

func (c responseCode) Run(ctx context.Context, s response.State, tool events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, error) {
	it := events.Item{Type: "code_interpreter_call", ID: itemID, Status: events.ResponseStatusCompleted, Outputs: []events.CodeOutput{}}
	fail := func(err error) (events.Item, error) {
		it.Status = events.ResponseStatusFailed
		it.Outputs = append(it.Outputs, events.CodeOutput{Type: "logs", Logs: "code_interpreter could not run the code: " + err.Error()})
		return it, err
	}
	code, err := runworker.CodeOf(call.Arguments)
	it.Code = code
	if err != nil {
		return fail(err)
	}
	id, auto, fileIDs := containerOf(tool.Container)
	if auto {
		id = ids.Container.Prefix + events.DeriveID(s.CreatedBy, "container")
		if _, err := c.p.Commands.Containers.Ensure(ctx, s.Account, id, s.ID, fileIDs); err != nil {
			return fail(err)
		}
	}
	it.ContainerID = id
	cont, err := c.p.Commands.Containers.Get(ctx, s.Account, id, eventstore.Fresh)
	if err != nil {
		return fail(err)
	}
	var inputs []string
	for _, f := range cont.Files {
		inputs = append(inputs, f.FileID)
	}
	res, err := c.p.code.Exec(ctx, s.Account, id, inputs, code, itemID)
	if err != nil {
		return fail(err)
	}
	if res.Logs != "" {
		it.Outputs = append(it.Outputs, events.CodeOutput{Type: "logs", Logs: res.Logs})
	}
	var added []events.ContainerFileAdded
	for _, img := range res.Images {
		it.Outputs = append(it.Outputs, events.CodeOutput{Type: "image", FileID: img})
		added = append(added, events.ContainerFileAdded{FileID: img, Path: sandbox.WorkDir + "/" + img + ".png", Source: "assistant"})
	}
	for _, f := range res.Files {
		added = append(added, events.ContainerFileAdded{FileID: f.FileID, Path: f.Path, Source: "assistant"})
	}
	if err := c.p.Commands.Containers.AddOutputs(ctx, s.Account, id, added); err != nil {
		return it, err
	}
	return it, nil
}

// Output is what the model reads of a code call: its logs, and what it wrote.
func (responseCode) Output(it events.Item) string {
	var b strings.Builder
	images := 0
	for _, o := range it.Outputs {
		if o.Type == "logs" {
			b.WriteString(o.Logs)
		} else {
			images++
		}
	}
	if images > 0 {
		fmt.Fprintf(&b, "\n[%d image(s) written; they are shown to the user with your answer]\n", images)
	}
	return b.String()
}
