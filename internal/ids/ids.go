package ids

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// MaxLen bounds an object ID, in bytes (the platform's are a prefix and a 26-character ULID or a hash).
const MaxLen = 128

// Kind is a kind of object ID: what error messages call it and the prefix every such ID starts with ("" when
// the kind has none).
type Kind struct {
	Name   string
	Prefix string
}

// The kinds of IDs the platform hands out.
var (
	Assistant = Kind{"assistant", "asst_"}
	Thread    = Kind{"thread", "thread_"}
	Message   = Kind{"message", "msg_"}
	Run       = Kind{"run", "run_"}
	Step      = Kind{"run step", "step_"}
	ToolCall  = Kind{"tool call", "call_"}
	File      = Kind{"file", "file-"}
	// VectorStore and FileBatch are the Assistants API's vector stores and their file batches.
	VectorStore = Kind{"vector store", "vs_"}
	FileBatch   = Kind{"file batch", "vsfb_"}
	Agent       = Kind{"agent", "agt_"}
	Session     = Kind{"session", "ses_"}
	Embed       = Kind{"embed", "emb_"}
	Account     = Kind{"account", "acct_"}
	Key         = Kind{"key", "key_"}
	// Response and Conversation are the Responses API's; Container is where its code_interpreter runs.
	Response     = Kind{"response", "resp_"}
	Conversation = Kind{"conversation", "conv_"}
	Container    = Kind{"container", "cntr_"}
	// Token is any subject token: for IDs of no fixed kind (projection names).
	Token = Kind{Name: "name"}
)

// Valid reports whether id can be an ID of kind k: the kind's prefix, then at least one more character, all of
// them subject-token characters (letters, digits, '_', '-'), at most MaxLen bytes.
func Valid(k Kind, id string) bool {
	return len(id) <= MaxLen && len(id) > len(k.Prefix) && strings.HasPrefix(id, k.Prefix) && natsx.ValidToken(id)
}

// Check returns nil when id can be an ID of kind k, else an errs.Invalid error naming param. The message says
// what an ID looks like and never repeats what was sent, which may be anything up to the size of a request.
func Check(param string, k Kind, id string) error {
	if Valid(k, id) {
		return nil
	}
	if id == "" {
		return errs.Missing(param)
	}
	what := "an ID"
	if k.Prefix != "" {
		what = "an ID that begins with '" + k.Prefix + "'"
	}
	return errs.InvalidField(param, "invalid '%s': expected %s, of at most %d letters, digits, '_' and '-'", param, what, MaxLen)
}

// CheckName returns nil when s can be a name a client chose (a handle, an agent reference, a storage key): not
// blank, at most max bytes, valid UTF-8 without control characters. Else an errs.Invalid error naming param,
// which does not repeat s.
func CheckName(param, s string, max int) error {
	if strings.TrimSpace(s) == "" {
		if s == "" {
			return errs.Missing(param)
		}
		return errs.InvalidField(param, "'%s' must not be blank", param)
	}
	if len(s) > max {
		return errs.InvalidField(param, "'%s' is %d bytes long; at most %d are allowed", param, len(s), max)
	}
	if !utf8.ValidString(s) {
		return errs.InvalidField(param, "'%s' is not valid UTF-8", param)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return errs.InvalidField(param, "'%s' contains a control character", param)
		}
	}
	return nil
}
