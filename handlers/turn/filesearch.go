package turn

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/events"
)

// SearchOptions bound one file_search call: at most Limit results (OpenAI's default 20), none scoring under
// Threshold; Ranker is what the call records.
type SearchOptions struct {
	Limit     int
	Threshold float64
	Ranker    string
}

// NewSearchOptions reads a tool's max_num_results and ranking options (zero values: OpenAI's defaults).
func NewSearchOptions(maxNumResults int, threshold float64, ranker string) SearchOptions {
	o := SearchOptions{Limit: 20, Threshold: threshold, Ranker: "auto"}
	if maxNumResults > 0 {
		o.Limit = maxNumResults
	}
	if ranker != "" {
		o.Ranker = ranker
	}
	return o
}

// NothingFound is what the model reads of a search that found nothing.
const NothingFound = "file_search found nothing in the files that matches these queries."

// searchFailed begins what the model reads of a search that failed.
const searchFailed = "file_search failed"

// SearchReport is what the model reads of a search: each result under its marker 【key:index†file name】, key
// naming the call (its place among the run's searches, or its item's ID), so that the citations of the answer can
// be traced back to the results.
func SearchReport(key string, results []events.FileSearchResult) string {
	if len(results) == 0 {
		return NothingFound
	}
	var b strings.Builder
	for j, r := range results {
		fmt.Fprintf(&b, "【%s:%d†%s】\n%s\n\n", key, j, r.FileName, r.Text)
	}
	return b.String()
}

// SearchFailure is what the model reads of a search that failed: why, when it is known.
func SearchFailure(err error) string {
	if err == nil {
		return searchFailed + "."
	}
	return searchFailed + ": " + err.Error()
}

// SearchFailureOf returns why a search failed from what the model read of it (SearchFailure: "" when that was not
// kept), and whether it did.
func SearchFailureOf(report string) (string, bool) {
	if report == searchFailed+"." {
		return "", true
	}
	why, ok := strings.CutPrefix(report, searchFailed+": ")
	return why, ok
}

// Citation is a marker of a text that names a result: where it is, in characters (what both APIs count), and the
// result.
type Citation struct {
	Text       string
	Start, End int
	Result     events.FileSearchResult
}

// marker is a citation the model copied from a search result: 【<call>:<index>†<file name>】.
var marker = regexp.MustCompile(`【([A-Za-z0-9_-]+):(\d+)†[^】]*】`)

// Citations finds the markers of a text that name a result the caller's searches found (results gives a call's
// results by its key). A marker naming no result is left as text, not made into a citation of some file.
func Citations(text string, results func(key string) []events.FileSearchResult) []Citation {
	var out []Citation
	for _, m := range marker.FindAllStringSubmatchIndex(text, -1) {
		result, ok := resultOf(text, m, results)
		if !ok {
			continue
		}
		start := utf8.RuneCountInString(text[:m[0]])
		out = append(out, Citation{Text: text[m[0]:m[1]], Start: start,
			End: start + utf8.RuneCountInString(text[m[0]:m[1]]), Result: result})
	}
	return out
}

// resultOf is the result a marker (m, its submatch indexes in text) names, if the searches found it.
func resultOf(text string, m []int, results func(key string) []events.FileSearchResult) (events.FileSearchResult, bool) {
	var index int
	if _, err := fmt.Sscan(text[m[4]:m[5]], &index); err != nil {
		return events.FileSearchResult{}, false
	}
	found := results(text[m[2]:m[3]])
	if index >= len(found) {
		return events.FileSearchResult{}, false
	}
	return found[index], true
}
