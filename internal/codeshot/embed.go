package codeshot

// EmbedRefs returns the embed keys that text refers to, each once, in the order they first appear.
//
// A reference is "#key" where key is a run of word characters (letters, digits, underscore). "##" stands for a
// literal "#", so a run of hashes refers to an embed only when it is odd: "#img" and "###img" refer to img, "##img"
// does not. This is Fixie's regex (?<!#)(##)*#(?!#)(\w+)(?!\w), written as a scanner because Go's regexp has no
// lookbehind. As in Fixie, a hash inside a word counts too ("a#b" refers to b).
func EmbedRefs(text string) []string {
	var keys []string
	seen := map[string]bool{}
	for i := 0; i < len(text); {
		if text[i] != '#' {
			i++
			continue
		}
		// A maximal run of hashes: nothing before it is a hash, nothing after it is.
		start := i
		for i < len(text) && text[i] == '#' {
			i++
		}
		if (i-start)%2 == 0 {
			continue
		}
		n := wordPrefixLen(text[i:])
		if n == 0 {
			continue
		}
		key := text[i : i+n]
		i += n
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys
}
