package chats

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/llm"
)

// Summarizer is the handler that compresses an adaptive session's history in the background.
func (h *Handlers) Summarizer() runtime.Handler {
	return runtime.Handler{
		Name:        "julep-summarizer",
		EventTypes:  []string{"session.chat_answered"},
		Handle:      h.summarize,
		Concurrency: h.cfg.Concurrency,
		AckWait:     h.cfg.AckWait,
	}
}

// The shape of a summarized history, as shares of the token budget: a summary is made once the history passes
// triggerShare of it; the newest turns are kept whole up to keepShare, and the summary of the rest is asked to fit
// summaryShare. What is left is room for the system message, the docs and the next question.
const (
	triggerShare = 0.75
	keepShare    = 0.35
	summaryShare = 0.15
)

// summaryPrompt asks the model for the summary.
const summaryPrompt = `You compress a conversation so that it can go on without its older messages. Write a summary of ` +
	`the conversation below (and of the earlier summary, if there is one) that keeps every fact, name, number, ` +
	`decision, preference and open question a later answer may need. Write plain sentences, in the conversation's ` +
	`language, in at most %d words. Do not add anything that was not said.`

// summarize records a summary of the older turns of an adaptive session whose history has passed 75% of its token
// budget.
func (h *Handlers) summarize(ctx context.Context, e events.Envelope) error {
	var snap snapshotForSummary
	ok := false
	err := h.cfg.Sessions.Read(ctx, e.AggregateID, e.Sequence, func(s *session.State, _ events.Version) error {
		if !s.Exists || s.Deleted || s.Julep == nil || s.Julep.Spec.ContextOverflow != "adaptive" || s.Julep.Spec.TokenBudget == nil {
			return nil
		}
		j := s.Julep
		for _, t := range j.Turns {
			if t.Done() && t.EndSeq > e.Sequence {
				return nil // a later turn has ended: its answer sets the summarizing off, with the longer history
			}
		}
		ok = true
		snap = snapshotForSummary{account: s.Account, spec: j.Spec, from: j.SummaryUpto(),
			entries: append([]session.Entry(nil), j.Entries...)}
		if sum, found := j.Summary(snap.from); found {
			snap.previous = sum.Summary
		}
		return nil
	})
	if err != nil || !ok {
		return err
	}
	budget := *snap.spec.TokenBudget
	model := h.modelOf(ctx, snap)
	withTools := snap.spec.ForwardToolCalls
	count := func(msgs []events.JulepMessage) int { return h.cfg.Preparer.Count(model, msgs) }
	prev := 0
	if snap.previous != "" {
		prev = count([]events.JulepMessage{session.SummaryMessage(snap.previous)})
	}
	rest := snap.entries[snap.from:]
	before := prev + count(session.HistoryMessages(rest, withTools))
	if float64(before) <= triggerShare*float64(budget) {
		return nil
	}
	upto := snap.cut(count, withTools, int(keepShare*float64(budget)))
	if upto <= snap.from {
		return nil // only the newest turn is left to keep, and it is kept whole
	}
	words := max(20, int(summaryShare*float64(budget)*0.75))
	var transcript strings.Builder
	if snap.previous != "" {
		fmt.Fprintf(&transcript, "Earlier summary:\n%s\n\nConversation:\n", snap.previous)
	}
	for _, m := range session.HistoryMessages(snap.entries[snap.from:upto], withTools) {
		who := m.Role
		if m.Name != "" {
			who += " (" + m.Name + ")"
		}
		fmt.Fprintf(&transcript, "%s: %s\n", who, m.Content)
	}
	meta := events.Meta{Account: e.Account, Actor: "system", CorrelationID: e.CorrelationID, CausationID: e.ID}
	// fail says in the session that no summary was made, and why: the older turns stay, truncated when the history
	// is over the budget. Best effort, as Julep's design says: the next answered turn tries again.
	fail := func(answering, reason string) error {
		h.cfg.Logger.Warn("summarize a Julep session's history", "session", e.AggregateID, "model", answering, "reason", reason)
		f := events.SessionSummaryFailed{From: snap.from, Upto: upto, Model: answering, Reason: reason, Turn: turnOf(e)}
		_, err := h.cfg.Sessions.Update(ctx, e.AggregateID, e.Sequence, meta, func(s *session.State) ([]events.Event, error) {
			return session.FailSummary(s, e.ID, f), nil
		})
		if err != nil {
			return fmt.Errorf("record that session %s could not be summarized: %w", e.AggregateID, err)
		}
		return nil
	}
	if r, ok := h.cfg.Models.(interface{ Answering(string) string }); ok && r.Answering(model) == llm.ProviderOffline {
		return fail(llm.ProviderOffline, "the offline model cannot summarise; configure a real model (OPENAI_BASE_URL and OPENAI_API_KEY) for summaries")
	}
	req := llm.Request{Model: model, MaxTokens: max(64, int(summaryShare*float64(budget))), Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: fmt.Sprintf(summaryPrompt, words)},
		{Role: llm.RoleUser, Content: transcript.String()},
	}}
	sctx, cancel := context.WithTimeout(ctx, h.cfg.StepTimeout)
	resp, err := h.cfg.Models.Complete(sctx, req, nil)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail(model, "the model failed: "+err.Error())
	}
	// Only a whole summary stands in for the turns: never a refusal, the offline model's notice, or one cut off
	// at the token limit, any of which would lose the user's facts without a word.
	summary := strings.TrimSpace(resp.Text)
	switch {
	case resp.Model == llm.ProviderOffline:
		return fail(resp.Model, "the offline model cannot summarise; configure a real model (OPENAI_BASE_URL and OPENAI_API_KEY) for summaries")
	case resp.Refused:
		return fail(resp.Model, "the model declined to summarise")
	case resp.FinishReason != llm.FinishStop:
		return fail(resp.Model, fmt.Sprintf("the summary did not end (finish reason %q)", resp.FinishReason))
	case summary == "":
		return fail(resp.Model, "the model's summary was empty")
	}
	after := count([]events.JulepMessage{session.SummaryMessage(summary)}) + count(session.HistoryMessages(snap.entries[upto:], withTools))
	_, err = h.cfg.Sessions.Update(ctx, e.AggregateID, e.Sequence, meta, func(s *session.State) ([]events.Event, error) {
		return session.Summarize(s, e.ID, snap.from, events.SessionSummarized{Upto: upto, Summary: summary,
			TokensBefore: before, TokensAfter: after, Model: resp.Model, Turn: turnOf(e)}), nil
	})
	if err != nil {
		return fmt.Errorf("record the summary of session %s: %w", e.AggregateID, err)
	}
	return nil
}

type snapshotForSummary struct {
	account  string
	spec     events.JulepSessionSpec
	from     int
	previous string
	entries  []session.Entry
}

// cut is where the summary ends: at a turn's start, as early as keeps the turns after it within keep tokens, and
// never past the newest turn's start (the newest turn is kept whole).
func (s snapshotForSummary) cut(count func([]events.JulepMessage) int, withTools bool, keep int) int {
	n := len(s.entries)
	if n == 0 {
		return s.from
	}
	upto := n
	kept := 0
	for i := n - 1; i >= s.from; i-- {
		if i > 0 && s.entries[i-1].Turn == s.entries[i].Turn {
			continue // not a turn's start
		}
		// Entries i..upto-1 are one turn.
		turn := count(session.HistoryMessages(s.entries[i:upto], withTools))
		if upto != n && kept+turn > keep {
			break
		}
		kept += turn
		upto = i
	}
	return upto
}

func (h *Handlers) modelOf(ctx context.Context, s snapshotForSummary) string {
	if len(s.spec.Agents) > 0 {
		if a, err := h.cfg.Lookup.JulepAgent(ctx, s.account, s.spec.Agents[0]); err == nil && a.Spec.Model != "" {
			return a.Spec.Model
		}
	}
	return ""
}

func turnOf(e events.Envelope) string {
	if a, ok := e.Event.(events.SessionChatAnswered); ok {
		return a.TurnID
	}
	return ""
}
