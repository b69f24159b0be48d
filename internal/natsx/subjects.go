package natsx

import "strings"

// SubjectFilter matches subjects against NATS filters ("*" is one token, ">" the rest) on the client. A reader of the
// whole log uses it to pass over what it does not fold without decoding it.
type SubjectFilter [][]string

// NewSubjectFilter splits each filter into its tokens once.
func NewSubjectFilter(filters ...string) SubjectFilter {
	f := make(SubjectFilter, 0, len(filters))
	for _, s := range filters {
		f = append(f, strings.Split(s, "."))
	}
	return f
}

// Match reports whether any filter matches the subject.
func (f SubjectFilter) Match(subject string) bool {
	for _, toks := range f {
		if matchTokens(toks, subject) {
			return true
		}
	}
	return false
}

func matchTokens(toks []string, subject string) bool {
	rest := subject
	for i, t := range toks {
		if t == ">" {
			return rest != "" // ">" stands for one token or more
		}
		if rest == "" {
			return false
		}
		tok, after, more := strings.Cut(rest, ".")
		if t != "*" && t != tok {
			return false
		}
		if !more {
			return i == len(toks)-1
		}
		rest = after
	}
	return false
}
