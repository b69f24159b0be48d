package openaiapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
)

// POST /v1/responses/compact (openai-node responses.compact, openai-go Responses.Compact; the Agents SDK's
// OpenAIResponsesCompactionSession calls it when a session's history grows). The model named in the request
// summarizes the context (the previous response's chain and the input); the answer is the context's user messages,
// kept as they were, then one compaction item whose encrypted_content is the summary sealed for the caller's
// account (internal/compaction). A later request that sends that item back in its input has it opened, and the
// model reads the summary in its place (handlers/responder). Nothing is recorded: like input_tokens, compaction
// is a computation over what the caller already holds, and its result lives in the caller's hands.

// offlineCannotCompact is the answer for the offline model, which cannot write a summary: refused rather than
// answered with a summary that would lose the conversation without a word.
const offlineCannotCompact = "The model '%s' is answered by Contrail's offline model, which cannot summarize a " +
	"conversation, so it cannot compact one. Set OPENAI_BASE_URL (and OPENAI_API_KEY) to an OpenAI-compatible server " +
	"and name one of its models."

func (f *Face) compactResponse(w http.ResponseWriter, r *http.Request) {
	out, err := f.compact(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, out)
}

func (f *Face) compact(r *http.Request) (obj, error) {
	account := principal(r).AccountID
	in, err := readFields(r)
	if err != nil {
		return nil, err
	}
	model, err := in.str("model")
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errs.Missing("model")
	}
	if f.d.Models == nil || f.d.Compaction == nil {
		return nil, errs.E(errs.Unavailable, "This node cannot compact responses.")
	}
	provider, name, err := f.d.Models.Resolve(model)
	if err != nil {
		return nil, errs.InvalidField("model", "The requested model '%s' does not exist.", clip(model))
	}
	if provider.Name() == llm.ProviderOffline {
		return nil, errs.InvalidField("model", offlineCannotCompact, clip(model))
	}
	instructions, err := in.str("instructions")
	if err != nil {
		return nil, err
	}
	// Accepted and not used: the prompt cache is the model server's, and the service tier OpenAI's.
	for _, name := range []string{"prompt_cache_key", "prompt_cache_retention", "service_tier"} {
		if _, err := in.str(name); err != nil {
			return nil, err
		}
	}
	prev, err := in.str("previous_response_id")
	if err != nil {
		return nil, err
	}
	items, err := readInput(in)
	if err != nil {
		return nil, err
	}
	if err := f.openCompactions(account, "input", items); err != nil {
		return nil, err
	}
	// The files the input names are the caller's, as in a create: the answer hands its user messages back, file ids
	// and all, for the client to send on.
	if err := f.checkItemFiles(r, "input", items); err != nil {
		return nil, err
	}
	history, err := f.compactHistory(r.Context(), account, prev)
	if err != nil {
		return nil, err
	}
	seen := slices.Concat(history, items)
	if len(seen) == 0 {
		return nil, errs.Missing("input")
	}
	resp, err := provider.Complete(r.Context(), llm.Request{Model: name, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: compaction.Prompt},
		{Role: llm.RoleUser, Content: compaction.Transcript(instructions, seen)},
	}}, nil)
	if err != nil {
		return nil, llm.Explain(provider, err)
	}
	// Only a whole summary stands in for the context: never a refusal or one cut off at the token limit, either of
	// which would lose what the conversation held without a word.
	summary := strings.TrimSpace(resp.Text)
	switch {
	case resp.Refused:
		return nil, errs.E(errs.Unavailable, "The model '%s' declined to summarize the conversation, so nothing was compacted.", clip(model))
	case resp.FinishReason != "" && resp.FinishReason != llm.FinishStop:
		return nil, errs.E(errs.Unavailable, "The model '%s' did not finish its summary (finish reason %q), so nothing was compacted.", clip(model), resp.FinishReason)
	case summary == "":
		return nil, errs.E(errs.Unavailable, "The model '%s' wrote an empty summary, so nothing was compacted.", clip(model))
	case len(summary) > compaction.MaxSummary:
		return nil, errs.E(errs.Unavailable, "The model '%s' wrote a summary longer than %d bytes, so nothing was compacted.", clip(model), compaction.MaxSummary)
	}
	now := time.Now().Unix()
	sealed, err := f.d.Compaction.Seal(account, compaction.Summary{Text: summary, Model: model, CreatedAt: now})
	if err != nil {
		return nil, err
	}
	output := []obj{}
	for _, it := range seen {
		if (it.Type == "message" || it.Type == "") && (it.Role == "user" || it.Role == "") {
			if it.ID == "" {
				it.ID = events.NewPrefixedID("msg_")
			}
			it.Type, it.Role = "message", "user"
			output = append(output, wireItem(it, nil))
		}
	}
	output = append(output, obj{"type": compaction.ItemType, "id": events.NewPrefixedID("cmp_"), "encrypted_content": sealed})
	u := resp.Usage
	return obj{"id": events.NewPrefixedID(ids.Response.Prefix), "object": "response.compaction", "created_at": now,
		"output": output,
		"usage": obj{"input_tokens": u.PromptTokens, "input_tokens_details": obj{"cached_tokens": 0},
			"output_tokens": u.CompletionTokens, "output_tokens_details": obj{"reasoning_tokens": 0},
			"total_tokens": u.TotalTokens}}, nil
}

// compactHistory is the context of the previous response a compaction names, and of the ones before it: the
// caller's own, ended.
func (f *Face) compactHistory(ctx context.Context, account, prev string) ([]events.Item, error) {
	if prev == "" {
		return nil, nil
	}
	if err := ids.Check("previous_response_id", ids.Response, prev); err != nil {
		return nil, err
	}
	s, err := f.d.Responses.Get(ctx, account, prev, eventstore.Fresh)
	if err != nil {
		if e := errs.As(err); e != nil && e.Code == errs.NotFound {
			e.Field = "previous_response_id"
		}
		return nil, err
	}
	if !s.Ended() {
		return nil, errs.InvalidField("previous_response_id", "Response '%s' is still %s: compact it when it has ended.", prev, s.Status)
	}
	before, err := f.d.Responses.History(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("compact: read the history of %s: %w", prev, err)
	}
	return slices.Concat(before, s.Context()), nil
}

// openCompactions opens the compaction items of items (param names them in an error): each one's summary becomes
// its content, which the model reads. One that is not a summary this platform sealed for the caller's account
// (forged, altered, another account's or another deployment's) is refused, naming it.
func (f *Face) openCompactions(account, param string, items []events.Item) error {
	for i := range items {
		if items[i].Type != compaction.ItemType {
			continue
		}
		field := fmt.Sprintf("%s[%d].encrypted_content", param, i)
		if f.d.Compaction == nil {
			return errs.InvalidField(field, "Invalid '%s': this node cannot read compaction items.", field)
		}
		sum, err := f.d.Compaction.Open(account, items[i].EncryptedContent)
		if err != nil {
			return errs.InvalidField(field, "Invalid '%s': %s.", field, compaction.ErrNotOurs)
		}
		items[i].Content = []events.ItemContent{{Type: "input_text", Text: sum.Text}}
	}
	return nil
}
