package runworker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// offlineFileSearch answers a run of the offline model that has file_search the only honest way it can: it
// searches the files with the user's question, then quotes the passage that best matches it, cited, or says that
// nothing in the files matches. It never writes an answer of its own.
func (w *Worker) offlineFileSearch(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, turn string,
	tool events.Tool) (*thread.State, error) {
	question := lastUserText(t)
	calls := searchCalls(t, r)
	if len(calls) == 0 {
		args, _ := json.Marshal(map[string][]string{"queries": {question}})
		return w.fileSearch(ctx, ref, t, r, turn, tool, []llm.ToolCall{{Name: thread.FileSearchTool, Arguments: string(args)}}, events.TokenUsage{})
	}
	n := len(calls) - 1
	last := calls[n]
	text := ""
	if out := stepOutput(t, r, last.ID); strings.HasPrefix(out, "file_search failed: ") {
		text = "I could not search the files: " + strings.TrimPrefix(out, "file_search failed: ")
	} else if best, passage := bestResult(last.FileSearch.Results, question); best >= 0 {
		name := last.FileSearch.Results[best].FileName
		text = fmt.Sprintf("From %s: \u201c%s\u201d【%d:%d†%s】\n\n(The offline model answers by quoting the passage of your files "+
			"that best matches the question; configure a model for written answers.)", name, passage, n, best, name)
	} else {
		text = fmt.Sprintf("I searched the files of this assistant and thread and found nothing that matches \u201c%s\u201d. "+
			"Add a file that covers it, or ask in other words.", clipText(question, 200))
	}
	return w.cfg.Runs.RecordTurn(ctx, ref, t, turn, thread.TurnResult{Text: text, Annotations: citations(text, calls)})
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

// bestResult picks the first result (they come best first) holding a sentence that shares a word with the
// question, and that sentence with the next: a result sharing no word is no evidence, whatever its vector score.
// It returns -1 when none does.
func bestResult(results []events.FileSearchResult, question string) (int, string) {
	terms := contentStems(question)
	if len(terms) == 0 {
		return -1, ""
	}
	for i, res := range results {
		sentences := splitSentences(res.Text)
		best, bestScore := -1, 0
		for j, s := range sentences {
			score := 0
			for stem := range contentStems(s) {
				if terms[stem] {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = j, score
			}
		}
		if best < 0 {
			continue
		}
		passage := sentences[best]
		if best+1 < len(sentences) && len(passage) < 200 {
			passage += " " + sentences[best+1]
		}
		return i, clipText(passage, 400)
	}
	return -1, ""
}

// splitSentences cuts text at sentence ends and line breaks.
func splitSentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.Join(strings.Fields(text[start:end]), " "); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i, c := range text {
		switch {
		case c == '\n':
			flush(i + 1)
		case (c == '.' || c == '?' || c == '!') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'):
			flush(i + 1)
		}
	}
	flush(len(text))
	return out
}

// contentStems are the words of a text that carry its subject, cut to their first five letters so that
// "descale" meets "descaling".
func contentStems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 4 || stopWords[w] {
			continue
		}
		if r := []rune(w); len(r) > 5 {
			w = string(r[:5])
		}
		out[w] = true
	}
	return out
}

var stopWords = map[string]bool{"what": true, "when": true, "where": true, "which": true, "while": true, "who": true,
	"whom": true, "whose": true, "why": true, "how": true, "does": true, "should": true, "would": true, "could": true,
	"often": true, "about": true, "there": true, "their": true, "these": true, "those": true, "this": true, "that": true,
	"with": true, "from": true, "have": true, "into": true, "your": true, "mine": true, "some": true, "many": true,
	"much": true, "more": true, "most": true, "please": true, "tell": true, "know": true, "want": true, "need": true,
	"they": true, "them": true, "than": true, "then": true, "also": true, "just": true, "like": true, "make": true}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
