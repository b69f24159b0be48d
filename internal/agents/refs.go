package agents

import (
	"unicode"
	"unicode/utf8"
)

// EmbedRefs returns the embed keys a message's text refers to, in order of first mention: "#key" where key is a
// run of letters, digits and '_' after an odd run of '#' ("##" writes a literal '#', so "##1" is no reference and
// "###1" is one). It is Fixie's rule (?<!#)(##)*#(?!#)(\w+)(?!\w), written without look-behind.
func EmbedRefs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(text); {
		if text[i] != '#' {
			i++
			continue
		}
		run := 0
		for i < len(text) && text[i] == '#' {
			run++
			i++
		}
		if run%2 == 0 {
			continue
		}
		start := i
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isWordRune(r) {
				break
			}
			i += size
		}
		if key := text[start:i]; key != "" && !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// ValidEmbedKey reports whether key can be referred to as #key.
func ValidEmbedKey(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for _, r := range key {
		if !isWordRune(r) {
			return false
		}
	}
	return true
}
