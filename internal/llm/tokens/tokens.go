// Package tokens counts tokens the way OpenAI's models do, with the tiktoken vocabularies (cl100k_base, o200k_base)
// compiled into the binary, so that counting works with no network. Providers use it to report usage when a server
// gives none, and the offline model to report its own.
//
// For models that are not OpenAI's (llama, mistral, ...) the count is an estimate in o200k_base, not their own
// tokenizer's count. It imports only the llm types.
package tokens

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/tiktoken-go/tokenizer"
)

// The encodings in use.
const (
	Cl100kBase = "cl100k_base"
	O200kBase  = "o200k_base"
)

// Building a codec compiles its split pattern and, the first time, its vocabulary map; it is done once per
// encoding and the codec is only read afterwards (its Count is safe for concurrent use).
var (
	cl100k = sync.OnceValue(func() tokenizer.Codec { return mustGet(tokenizer.Cl100kBase) })
	o200k  = sync.OnceValue(func() tokenizer.Codec { return mustGet(tokenizer.O200kBase) })
)

func mustGet(enc tokenizer.Encoding) tokenizer.Codec {
	c, err := tokenizer.Get(enc)
	if err != nil {
		// The encodings are compiled in; failing here is a broken build, not a runtime condition.
		panic("tokens: encoding " + string(enc) + " missing from the tokenizer library: " + err.Error())
	}
	return c
}

// cl100kPrefixes are the model families that use cl100k_base; everything else, including models that are not
// OpenAI's, uses o200k_base, the encoding of every OpenAI chat model since gpt-4o.
var cl100kPrefixes = []string{"gpt-4-", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002", "ft:gpt-4-", "ft:gpt-3.5"}

// Encoding names the encoding used for model: cl100k_base for gpt-4, gpt-3.5-turbo and the embedding models,
// o200k_base for gpt-4o, gpt-4.1, gpt-5, the o-series and any model it does not know.
func Encoding(model string) string {
	m := strings.ToLower(model)
	// "gpt-4" exactly, or a dated gpt-4 ("gpt-4-0613", "gpt-4-turbo"), but not "gpt-4o" or "gpt-4.1".
	if m == "gpt-4" {
		return Cl100kBase
	}
	for _, p := range cl100kPrefixes {
		if strings.HasPrefix(m, p) {
			return Cl100kBase
		}
	}
	return O200kBase
}

func codecFor(model string) tokenizer.Codec {
	if Encoding(model) == Cl100kBase {
		return cl100k()
	}
	return o200k()
}

// Count is the number of tokens in text for model. Special tokens such as "<|endoftext|>" are counted as the
// plain text they are.
func Count(model, text string) int {
	if text == "" {
		return 0
	}
	n, err := codecFor(model).Count(text)
	if err != nil {
		// The codec fails only in strict UTF-8 mode, which is not used; count bytes rather than report nothing.
		return len(text)
	}
	return n
}

// Truncate cuts text to at most n tokens of model, reporting whether it cut anything. The cut falls on a token
// boundary, which may split a multi-byte character; the remainder is made valid UTF-8 by dropping it.
func Truncate(model, text string, n int) (string, bool) {
	c := codecFor(model)
	ids, _, err := c.Encode(text)
	if err != nil || len(ids) <= n {
		return text, false
	}
	if n <= 0 {
		return "", true
	}
	out, err := c.Decode(ids[:n])
	if err != nil {
		return "", true
	}
	return strings.ToValidUTF8(out, ""), true
}

// The chat format's overhead, from OpenAI's cookbook ("How to count tokens with tiktoken"): every message costs
// three tokens besides its fields, a name one more, and every reply is primed with three.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensReplyPrime = 3
)

// An image is counted by a fixed estimate, as it is not decoded to learn its size. OpenAI counts one by its detail
// and size: at "low", 85 tokens whatever the size; otherwise 85 plus 170 for each 512-pixel tile of the image
// scaled to fit 2048×2048 and then to 768 pixels on its short side. The estimate for any detail but "low" is what
// a 1024×1024 image costs at "high" (four tiles: 765): a smaller image costs less, a larger oblong one more.
const (
	imageTokensLow = 85
	imageTokens    = 85 + 4*170
)

// ImageTokens is the estimate of the prompt tokens one image at detail costs (see imageTokens).
func ImageTokens(detail string) int {
	if detail == "low" {
		return imageTokensLow
	}
	return imageTokens
}

// countImages is ImageTokens of each of a message's images.
func countImages(m llm.Message) int {
	n := 0
	for _, im := range m.Images {
		n += ImageTokens(im.Detail)
	}
	return n
}

// CountMessages is the number of prompt tokens msgs cost model, following the rule in OpenAI's cookbook: three
// tokens a message, the tokens of its role, content and name, one more for a name, and three to prime the reply.
// The rule matches OpenAI's API for gpt-3.5-turbo, gpt-4 and gpt-4o. Tool calls and tool call IDs are counted as
// the text of their fields; OpenAI publishes no rule for them. Images are counted by ImageTokens' estimate.
func CountMessages(model string, msgs []llm.Message) int {
	if len(msgs) == 0 {
		return 0
	}
	n := tokensReplyPrime
	for _, m := range msgs {
		n += tokensPerMessage + Count(model, m.Role) + Count(model, m.Content)
		if m.Name != "" {
			n += Count(model, m.Name) + tokensPerName
		}
		if m.ToolCallID != "" {
			n += Count(model, m.ToolCallID)
		}
		for _, c := range m.ToolCalls {
			n += Count(model, c.Name) + Count(model, c.Arguments)
		}
		n += countImages(m)
	}
	return n
}

// The tool definitions' overhead, from the same cookbook, measured against OpenAI's API. The cl100k models pay
// more to open each function.
const (
	funcInitO200k  = 7
	funcInitCl100k = 10
	propInit       = 3
	propKey        = 3
	enumInit       = -3
	enumItem       = 3
	funcEnd        = 12
)

// CountTools is the number of prompt tokens the definitions of tools cost model, following the cookbook's rule:
// per function its name and description, per property its name, type, description and enum values, plus fixed
// overheads. Parameters that are not a JSON object schema count only the function's name and description.
func CountTools(model string, tools []llm.Tool) int {
	if len(tools) == 0 {
		return 0
	}
	funcInit := funcInitO200k
	if Encoding(model) == Cl100kBase {
		funcInit = funcInitCl100k
	}
	n := 0
	for _, t := range tools {
		n += funcInit + Count(model, t.Name+":"+strings.TrimSuffix(t.Description, "."))
		props := schemaProperties(t.Parameters)
		if len(props) == 0 {
			continue
		}
		n += propInit
		for _, p := range props {
			n += propKey
			if len(p.Enum) > 0 {
				n += enumInit
				for _, e := range p.Enum {
					n += enumItem + Count(model, fmt.Sprint(e))
				}
			}
			n += Count(model, p.name+":"+p.typeName()+":"+strings.TrimSuffix(p.Description, "."))
		}
	}
	return n + funcEnd
}

type property struct {
	name        string
	Type        any    `json:"type"` // a string, or a list of them
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
}

func (p property) typeName() string {
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		names := make([]string, 0, len(t))
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
		return strings.Join(names, ",")
	default:
		return ""
	}
}

// schemaProperties reads the top-level properties of a JSON schema in the order they are written, since the
// count does not depend on order but a deterministic walk keeps it easy to check.
func schemaProperties(schema json.RawMessage) []property {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(s.Properties)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var props []property
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return props
		}
		name, _ := t.(string)
		var p property
		if err := dec.Decode(&p); err != nil {
			return props
		}
		p.name = name
		props = append(props, p)
	}
	return props
}

// Usage counts a request and its answer: the prompt (messages and tool definitions) and the completion (text and
// tool calls). Providers use it when the server reports no usage.
func Usage(req llm.Request, resp llm.Response) llm.Usage {
	prompt := CountMessages(req.Model, req.Messages) + CountTools(req.Model, req.Tools)
	completion := Count(req.Model, resp.Text)
	for _, c := range resp.ToolCalls {
		completion += Count(req.Model, c.Name) + Count(req.Model, c.Arguments)
	}
	return llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// Split cuts text into its tokens in encoding (Cl100kBase or O200kBase; anything else is O200kBase). Joined, the
// tokens are text byte for byte when text is valid UTF-8; a token may end or begin inside a multi-byte character.
// Chunkers use it to know where each token starts.
func Split(encoding, text string) ([]string, error) {
	c := o200k()
	if encoding == Cl100kBase {
		c = cl100k()
	}
	_, toks, err := c.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("split %s tokens: %w", encoding, err)
	}
	return toks, nil
}

// Counter counts tokens like Count, remembering the counts of the texts it has seen (a bounded number, and a bounded
// size of text): a chat's history is counted again on every turn, and tokenizing it is what a turn of the offline
// model costs most. Even a short text (a role, a one-line message) costs more to tokenize (a regular expression over
// it) than to look up.
type Counter struct {
	mu    sync.Mutex
	max   int
	bytes int // of the texts kept as keys
	// short holds texts up to maxKeptText by themselves, long the longer ones by their digest: a key of two strings
	// hashes faster than one that also carries a digest, and nearly every text is short.
	short map[shortText]int
	long  map[longText]int
}

type shortText struct{ encoding, text string }

type longText struct {
	encoding string
	sum      [sha256.Size]byte
}

// NewCounter returns a counter that remembers up to max counts.
func NewCounter(max int) *Counter {
	return &Counter{max: max, short: map[shortText]int{}, long: map[longText]int{}}
}

const (
	// maxKeptText is the length up to which a text is its own key; a longer one is keyed by its SHA-256. A
	// message's text is its own key: hashing it with SHA-256 on every turn cost a run of a long thread more than
	// the map's own hash of the text does.
	maxKeptText = 64 << 10
	// maxKeptBytes bounds the texts a counter keeps as keys; past it the counter starts afresh.
	maxKeptBytes = 32 << 20
)

// Count is Count, remembered.
func (c *Counter) Count(model, text string) int {
	if text == "" {
		return 0
	}
	k := keyOf(Encoding(model), text) // a long text's digest, once and outside the lock
	c.mu.Lock()
	n, ok := c.lookup(k)
	c.mu.Unlock()
	if ok {
		return n
	}
	n = Count(model, text)
	c.mu.Lock()
	c.keep(k, n)
	c.mu.Unlock()
	return n
}

// textKey is where a text's count is kept: under the text itself, or under a long text's digest.
type textKey struct {
	long  bool
	short shortText
	sum   longText
}

func keyOf(enc, text string) textKey {
	if len(text) <= maxKeptText {
		return textKey{short: shortText{enc, text}}
	}
	return textKey{long: true, sum: longText{enc, sha256.Sum256([]byte(text))}}
}

// lookup finds a remembered count. c.mu is held.
func (c *Counter) lookup(k textKey) (int, bool) {
	if k.long {
		n, ok := c.long[k.sum]
		return n, ok
	}
	n, ok := c.short[k.short]
	return n, ok
}

// keep remembers a count. c.mu is held.
func (c *Counter) keep(k textKey, n int) {
	kept := len(k.short.text) // a long text's digest keeps none of it
	if len(c.short)+len(c.long) >= c.max || c.bytes+kept > maxKeptBytes {
		clear(c.short) // amortised: a full cache starts afresh
		clear(c.long)
		c.bytes = 0
	}
	if k.long {
		c.long[k.sum] = n
	} else {
		c.short[k.short] = n
	}
	c.bytes += kept
}

// Usage is Usage, counting message contents through the counter. The messages' counts are looked up under one hold
// of the lock (a turn of a long chat looks up a hundred texts), and only the texts not remembered are tokenized.
func (c *Counter) Usage(req llm.Request, resp llm.Response) llm.Usage {
	prompt := CountTools(req.Model, req.Tools)
	if len(req.Messages) > 0 {
		prompt += tokensReplyPrime
	}
	enc := Encoding(req.Model)
	var missed []string
	c.mu.Lock()
	for _, m := range req.Messages {
		prompt += tokensPerMessage
		for _, text := range [...]string{m.Role, m.Content, m.Name} {
			if text == "" {
				continue
			}
			// A long text goes to Count, which takes its digest outside the lock.
			if len(text) <= maxKeptText {
				if n, ok := c.lookup(textKey{short: shortText{enc, text}}); ok {
					prompt += n
					continue
				}
			}
			missed = append(missed, text)
		}
	}
	c.mu.Unlock()
	for _, text := range missed {
		prompt += c.Count(req.Model, text)
	}
	for _, m := range req.Messages {
		if m.Name != "" {
			prompt += tokensPerName
		}
		if m.ToolCallID != "" {
			prompt += Count(req.Model, m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			prompt += Count(req.Model, tc.Name) + c.Count(req.Model, tc.Arguments)
		}
		prompt += countImages(m)
	}
	completion := c.Count(req.Model, resp.Text)
	for _, tc := range resp.ToolCalls {
		completion += Count(req.Model, tc.Name) + Count(req.Model, tc.Arguments)
	}
	return llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// contextWindows are the context windows of OpenAI's model families, in tokens (input and output together); a
// prefix comes before any shorter prefix of it.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1_047_576},
	{"gpt-5", 400_000},
	{"gpt-4o", 128_000},
	{"gpt-4.5", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4-1106", 128_000},
	{"gpt-4-0125", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
}

// DefaultContextWindow is what ContextWindow assumes of a model it does not know (most served models today take
// at least this much; a smaller one answers a request that does not fit with its own error).
const DefaultContextWindow = 128_000

// ContextWindow is how many tokens model takes in one request, input and output together, and whether it knows
// the model (otherwise DefaultContextWindow). A provider's prefix ("openai/gpt-4o") is ignored.
func ContextWindow(model string) (int, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, w := range contextWindows {
		if strings.HasPrefix(m, w.prefix) {
			return w.tokens, true
		}
	}
	return DefaultContextWindow, false
}
