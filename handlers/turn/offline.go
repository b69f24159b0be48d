package turn

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/contrailhq/contrail/events"
)

// OfflineAnswer is the offline model's answer once it searched the files with the user's question (the only
// honest answer it can give with file_search): the passage that best matches the question, cited with the marker
// of the search (key, see SearchReport), or that nothing in the files (where: "of this assistant and thread")
// matches. It never writes an answer of its own. report is what the search gave the model (SearchReport or
// SearchFailure).
func OfflineAnswer(question, where, key, report string, results []events.FileSearchResult) string {
	if why, failed := SearchFailureOf(report); failed && why != "" {
		return "I could not search the files: " + why
	} else if failed {
		return "I could not search the files."
	}
	if best, passage := bestResult(results, question); best >= 0 {
		name := results[best].FileName
		return fmt.Sprintf("From %s: \u201c%s\u201d【%s:%d†%s】\n\n(The offline model answers by quoting the passage of your files "+
			"that best matches the question; configure a model for written answers.)", name, passage, key, best, name)
	}
	return fmt.Sprintf("I searched the files %s and found nothing that matches \u201c%s\u201d. "+
		"Add a file that covers it, or ask in other words.", where, clipText(question, 200))
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
		if len([]rune(w)) < 4 || isStopWord(w) {
			continue
		}
		if r := []rune(w); len(r) > 5 {
			w = string(r[:5])
		}
		out[w] = true
	}
	return out
}

// isStopWord reports whether a word says nothing of a question's subject (a switch, not a package-level map).
func isStopWord(w string) bool {
	switch w {
	case "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "how", "does", "should", "would",
		"could", "often", "about", "there", "their", "these", "those", "this", "that", "with", "from", "have", "into",
		"your", "mine", "some", "many", "much", "more", "most", "please", "tell", "know", "want", "need", "they",
		"them", "than", "then", "also", "just", "like", "make":
		return true
	}
	return false
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
