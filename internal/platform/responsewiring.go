package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/responder"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/extract"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/sandbox"
	"github.com/contrailhq/contrail/projections"
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

// offeredTool is how the model loop offers a server-side tool, for the face's input_tokens to count; a tool whose
// functions are listed only when a response runs (mcp) is not offered here.
func (p *Platform) offeredTool(t events.ResponseTool) (llm.Tool, bool) {
	x, ok := p.responseExecutors()[t.Type]
	if !ok {
		return llm.Tool{}, false
	}
	if _, multi := x.(responder.MultiOfferer); multi {
		return llm.Tool{}, false
	}
	return x.Offer(t)
}

// responseFiles runs a response's file_search calls over the vector stores its tool names (the account's own: the
// face checked them when the response was made, and they are read as the response's account here again).
type responseFiles struct{ p *Platform }

func (responseFiles) ItemType() string { return "file_search_call" }

// Offer offers file_search; its markers name a call by its item's ID.
func (responseFiles) Offer(events.ResponseTool) (llm.Tool, bool) {
	return turn.FileSearchTool("【fs_1:0†manual.pdf】"), true
}

func (f responseFiles) Run(ctx context.Context, s response.State, tool events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, error) {
	it := events.Item{Type: "file_search_call", ID: itemID, Status: events.ResponseStatusCompleted, Results: []events.FileSearchResult{}}
	queries, err := turn.SearchQueries(call.Arguments)
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
	var ro struct {
		Ranker         string  `json:"ranker"`
		ScoreThreshold float64 `json:"score_threshold"`
	}
	if given(tool.RankingOptions) {
		_ = json.Unmarshal(tool.RankingOptions, &ro) // checked by the face (readResponseTools)
	}
	opts := turn.NewSearchOptions(tool.MaxNumResults, ro.ScoreThreshold, ro.Ranker)
	req := commands.SearchRequest{Queries: queries, Limit: opts.Limit, MinScore: opts.Threshold}
	if given(tool.Filters) {
		filter, err := docindex.ParseFilter(tool.Filters, "filters")
		if err != nil {
			return nil, err
		}
		req.Filter = filter
	}
	out, _, err := f.p.searchFiles(ctx, account, tool.VectorStoreIDs, req)
	return out, err
}

// given reports whether a tool's option was sent: a null is none, as the face took it (readResponseTools), not a
// filter of no type that would fail every search.
func given(raw json.RawMessage) bool {
	v := bytes.TrimSpace(raw)
	return len(v) > 0 && string(v) != "null"
}

// Output is what the model reads of a search: each result under its marker.
func (responseFiles) Output(it events.Item) string {
	if it.Status == events.ResponseStatusFailed {
		return turn.SearchFailure(nil)
	}
	return turn.SearchReport(it.ID, it.Results)
}

// Results gives the results of the response's searches by a marker's key, the file_search_call's item ID.
func (responseFiles) Results(items []events.Item) func(key string) []events.FileSearchResult {
	return func(key string) []events.FileSearchResult {
		for _, it := range items {
			if it.Type == "file_search_call" && it.ID == key {
				return it.Results
			}
		}
		return nil
	}
}

// responseCode runs a response's code_interpreter calls in the sandbox of its container: one named by the tool,
// or one made for the response ({"type": "auto", "file_ids"}, its ID derived from the response). The container's
// files are at /mnt/data; what the code writes is saved as the account's files and added to the container.
type responseCode struct{ p *Platform }

func (responseCode) ItemType() string { return "code_interpreter_call" }

func (c responseCode) Offer(events.ResponseTool) (llm.Tool, bool) {
	return turn.CodeTool, true
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

// Started is the call Run makes, recorded before the code runs; none for arguments that do not read (nothing runs).
func (responseCode) Started(_ events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, bool) {
	code, err := turn.CodeOf(call.Arguments)
	if err != nil {
		return events.Item{}, false
	}
	return events.Item{Type: "code_interpreter_call", ID: itemID, Code: code, Outputs: []events.CodeOutput{}}, true
}

func (c responseCode) Run(ctx context.Context, s response.State, tool events.ResponseTool, call llm.ToolCall, itemID string) (events.Item, error) {
	it := events.Item{Type: "code_interpreter_call", ID: itemID, Status: events.ResponseStatusCompleted, Outputs: []events.CodeOutput{}}
	fail := func(err error) (events.Item, error) {
		it.Status = events.ResponseStatusFailed
		it.Outputs = turn.CodeOutputs(turn.CodeResult{}, err)
		return it, err
	}
	code, err := turn.CodeOf(call.Arguments)
	it.Code = code
	if err != nil {
		return fail(err)
	}
	id, auto, fileIDs := containerOf(tool.Container)
	if auto {
		made, err := c.p.Commands.Containers.Ensure(ctx, s.Account, ids.Container.Prefix+events.DeriveID(s.CreatedBy, "container"), s.ID, fileIDs)
		if err != nil {
			return fail(err)
		}
		id = made.ID
		// The client lists its containers as soon as the response is done: the index shows this one by then.
		if _, err := c.p.Views.ShowsAggregate(ctx, projections.Containers{}, id); err != nil {
			return fail(err)
		}
	}
	it.ContainerID = id
	// The call is the container's activity: recorded before it runs, refused once the container expired (its warm
	// sandbox, if this node still holds one, goes with it).
	cont, err := c.p.Commands.Containers.Use(ctx, s.Account, id, itemID, "container")
	if err != nil {
		if errs.CodeOf(err) == errs.Invalid {
			c.p.code.release(s.Account, id, whyContainerExpired)
		}
		return fail(err)
	}
	var inputs []string
	for _, f := range cont.Files {
		inputs = append(inputs, f.FileID)
	}
	res, err := c.p.code.Exec(ctx, s.Account, id, inputs, cont.Stale(), code, itemID)
	if err != nil {
		return fail(err)
	}
	it.Outputs = turn.CodeOutputs(res, nil)
	var added []events.ContainerFileAdded
	for _, img := range res.Images {
		added = append(added, events.ContainerFileAdded{FileID: img, Path: sandbox.WorkDir + "/" + img + ".png", Source: "assistant"})
	}
	for _, f := range res.Files {
		added = append(added, events.ContainerFileAdded{FileID: f.FileID, Path: f.Path, Source: "assistant"})
	}
	if len(added) == 0 {
		return it, nil
	}
	err = c.p.Commands.Containers.AddOutputs(ctx, s.Account, id, added)
	if errs.CodeOf(err) == errs.NotFound {
		// Deleted while the call ran: its files stay the account's (the call's outputs name them), but a deleted
		// container records nothing more.
		c.p.Logger.Info("a code_interpreter call ended after its container was deleted: its files are not recorded on it",
			"component", "sandbox", "account", s.Account, "container", id, "item", itemID, "files", len(added))
		c.p.code.release(s.Account, id, whyContainerDeleted) // in case this node did not hear the deletion
		return it, nil
	}
	if err != nil {
		return it, err
	}
	return it, nil
}

// Output is what the model reads of a code call: its logs, and what it wrote (the files it wrote other than images
// are the container's, not the item's).
func (responseCode) Output(it events.Item) string {
	return turn.CodeReport(it.Outputs, nil)
}

// responseTexts reads the text of the files a response's input shows the model (input_file by file_id): the file
// as the caller's (commands.Files.Read: another account's, or one deleted, is not found), its text extracted as a
// vector store extracts it.
type responseTexts struct{ p *Platform }

// An input file is read whole into memory to extract its text: maxInputFileBytes bounds that, as OpenAI bounds a
// file given as input (32 MB). Its text goes into the message, every turn: maxInputFileText (about 64k tokens of
// English) keeps one file from filling a model's context; a larger one is for file_search, and the model is told
// so rather than shown part of it.
const (
	maxInputFileBytes = 32 << 20
	maxInputFileText  = 256 << 10
)

func (t responseTexts) ReadText(ctx context.Context, account, id string) (string, string, error) {
	name, body, err := t.p.Commands.Files.Read(ctx, account, id)
	if err != nil {
		return "", "", err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxInputFileBytes+1))
	if err != nil {
		return "", "", fmt.Errorf("read file %s: %w", id, err)
	}
	if len(data) > maxInputFileBytes {
		return "", "", errs.E(errs.Invalid, "the file is larger than %d MiB, the most a message shows; put it in a vector store and use file_search", maxInputFileBytes>>20)
	}
	var text bytes.Buffer
	_, err = extract.Extract(ctx, name, bytes.NewReader(data), int64(len(data)), &text, extract.Options{MaxText: maxInputFileText})
	if _, ok := extract.CodeOf(err); ok {
		return "", "", errs.E(errs.Invalid, "%s; the model reads the text of text, Markdown, JSON, CSV, HTML, PDF and DOCX files of at most %d KiB of text (put larger ones in a vector store and use file_search)",
			err.Error(), maxInputFileText>>10)
	}
	if err != nil {
		return "", "", fmt.Errorf("read the text of file %s: %w", id, err)
	}
	return name, text.String(), nil
}
