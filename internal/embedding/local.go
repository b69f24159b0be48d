package embedding

import (
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// DefaultLocalDim is the dimension of the local embedder's vectors unless told otherwise.
const DefaultLocalDim = 512

// Local embeds text by its words, word pairs and character n-grams, hashed into a fixed number of dimensions.
// It needs no network and no model files, and is deterministic: the same text gives the same vector in every
// process and every version that keeps this file's feature set.
//
// The weighting is fixed rather than learned. TF-IDF with IDF from "the texts seen so far" would change every
// vector's meaning as texts arrive, yet routing compares a query embedded now with sample queries embedded, and
// stored, when their agent was registered: vectors made under different IDF tables are not comparable. So term
// frequency is sublinear (1 + ln tf) and every word weighs the same. A fixed IDF prior that discounts function
// words was tried and routed worse (10% against 16% top-1 on testdata/routing): in short queries words like
// "how many", "what time" and "where" carry the kind of request. Character n-grams let inflections and typos
// ("booking", "book", "bokking") share most of their features.
type Local struct {
	dim int
}

// NewLocal returns a local embedder with vectors of dim dimensions (DefaultLocalDim if dim <= 0).
func NewLocal(dim int) *Local {
	if dim <= 0 {
		dim = DefaultLocalDim
	}
	return &Local{dim: dim}
}

// Name is "local".
func (l *Local) Name() string { return "local" }

// Dim is the vectors' dimension.
func (l *Local) Dim() int { return l.dim }

// Embed returns one L2-normalised vector per text. It never fails but for a cancelled context.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = l.embed(t)
	}
	return out, nil
}

// Feature weights by kind. A word and its n-grams weigh the same in total (each of a word's n-grams weighs
// 1/sqrt(count)); word pairs add a little word order.
const (
	wordWeight         = 1.0
	bigramWeight       = 0.5
	ngramWeight        = 1.0
	minNgram, maxNgram = 3, 5
)

// feature is one hashed feature of a text: how often it occurs and its weight per occurrence.
type feature struct {
	count  int
	weight float64
}

func (l *Local) embed(text string) []float32 {
	words := splitWords(text)
	features := make(map[string]*feature)
	add := func(key string, weight float64) {
		f := features[key]
		if f == nil {
			f = &feature{}
			features[key] = f
		}
		f.count++
		// An n-gram shared by a short and a long word keeps the larger of its two weights.
		f.weight = max(f.weight, weight)
	}
	for i, w := range words {
		add("w\x00"+w, wordWeight)
		if i > 0 {
			add("b\x00"+words[i-1]+"\x00"+w, bigramWeight)
		}
		grams := ngrams(w)
		for _, g := range grams {
			add("c\x00"+g, ngramWeight/math.Sqrt(float64(len(grams))))
		}
	}
	if len(features) == 0 {
		// Every text must get a unit vector, so one with no words gets one of its own.
		add("\x00empty", 1)
	}

	// Sum in a fixed order: float addition is not associative, and map order changes from run to run.
	keys := make([]string, 0, len(features))
	for k := range features {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	v := make([]float32, l.dim)
	for _, k := range keys {
		f := features[k]
		h := fnv.New64a()
		h.Write([]byte(k))
		sum := h.Sum64()
		x := float32(f.weight * (1 + math.Log(float64(f.count))))
		if sum>>63 == 1 {
			// The top bit picks the sign, so that colliding features cancel on average instead of piling up.
			x = -x
		}
		v[sum%uint64(l.dim)] += x
	}

	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		// Every feature cancelled another out: vanishingly rare, but the vector must still be a unit one.
		v[0] = 1
		return v
	}
	scale := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= scale
	}
	return v
}

// splitWords normalises text (NFKC, lower case) and returns its words: runs of letters, digits and combining
// marks. Apostrophes inside a word are dropped, so "don't" and "dont" are one word.
func splitWords(text string) []string {
	text = strings.ToLower(norm.NFKC.String(text))
	text = strings.NewReplacer("'", "", "\u2019", "").Replace(text)
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// ngrams returns the character n-grams of a word marked at both ends ("<word>"), for n from minNgram to maxNgram.
func ngrams(word string) []string {
	r := []rune("<" + word + ">")
	var out []string
	for n := minNgram; n <= maxNgram; n++ {
		for i := 0; i+n <= len(r); i++ {
			out = append(out, string(r[i:i+n]))
		}
	}
	return out
}
