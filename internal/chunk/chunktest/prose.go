// Package chunktest makes English-like text for tests and benchmarks of chunking and search: common words in
// sentences and paragraphs, which tokenize and index like prose, without shipping a corpus. It is imported only by
// tests.
package chunktest

import (
	"io"
	"math/rand/v2"
	"strings"
)

// Vocabulary is the words prose is made of.
var Vocabulary = strings.Fields(`the of and to in is you that it he was for on are as with his they at be this have
	from or one had by word but not what all were we when your can said there use an each which she do how their if
	will up other about out many then them these so some her would make like him into time has look two more write go
	see number no way could people my than first water been call who oil its now find long down day did get come made
	may part search index vector store file chunk token embedding query result score citation assistant thread
	message run step password login account billing invoice refund shipping order delivery garden weather travel
	music recipe kitchen engine battery network server memory garage library museum planet river mountain`)

// Prose is about words words of text; the same seed gives the same text.
func Prose(seed uint64, words int) string {
	var b strings.Builder
	_ = Write(&b, seed, words, -1)
	return b.String()
}

// Write writes prose to w until it has written at least words words or, when size >= 0, size bytes.
func Write(w io.StringWriter, seed uint64, words, size int) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n, bytes := 0, 0
	for (size < 0 && n < words) || (size >= 0 && bytes < size) {
		sentence := 5 + r.IntN(15)
		for i := 0; i < sentence; i++ {
			word := Vocabulary[r.IntN(len(Vocabulary))]
			if i == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			sep := " "
			if i == sentence-1 {
				sep = ". "
				if r.IntN(6) == 0 {
					sep = ".\n\n"
				}
			}
			k, err := w.WriteString(word + sep)
			if err != nil {
				return err
			}
			bytes += k
			n++
		}
	}
	return nil
}
