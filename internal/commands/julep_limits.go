package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/jinja"
)

// The limits of Julep's fields (the /julep face). Where Julep's typespec gives one the face keeps it (a name of
// 1-255 characters, a doc's content strings of 30,000, recall options' ranges); the rest are Contrail's, chosen so
// that one event stays well under the log's max payload. docs/limits.md lists them.
const (
	maxJulepName          = 255     // an agent's, user's or tool's display name (characters)
	maxJulepAbout         = 16_000  // an agent's or user's about (characters)
	maxJulepInstructions  = 100     // instructions given as a list
	maxJulepInstruction   = 256_000 // all instructions together (characters)
	maxJulepJSON          = 64 << 10
	maxJulepAgents        = 16 // agents of a session
	maxJulepUsers         = 16 // users of a session
	maxJulepSituation     = 64_000
	maxJulepTokenBudget   = 10_000_000
	maxJulepMessages      = 100     // messages of one chat
	maxJulepContent       = 256_000 // one message's content (characters)
	maxJulepStops         = 4
	maxJulepDocTitle      = 800    // a doc's title (characters)
	maxJulepDocSnippets   = 100    // strings of a doc's content
	maxJulepDocSnippet    = 30_000 // one string of a doc's content (characters), Julep's own
	maxJulepDocBytes      = 256 << 10
	maxJulepEmbedTexts    = 100
	maxJulepCanonicalName = 255
)

// checkText refuses text over max characters, or holding what is not UTF-8.
func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return errs.InvalidField(field, "%s is not valid UTF-8", field)
	}
	return checkChars(field, s, max)
}

// checkJulepName checks a display name: not blank, at most 255 characters, no control characters.
func checkJulepName(field, s string, required bool) error {
	if strings.TrimSpace(s) == "" {
		if required {
			return errs.InvalidField(field, "%s must not be empty", field)
		}
		return nil
	}
	if err := checkText(field, s, maxJulepName); err != nil {
		return err
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return errs.InvalidField(field, "%s must not contain control characters", field)
		}
	}
	return nil
}

var canonicalNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]*$`)

// checkCanonicalName checks Julep's machine-friendly names (a letter, then letters, digits and '_').
func checkCanonicalName(field, s string) error {
	if s == "" {
		return nil
	}
	if len(s) > maxJulepCanonicalName || !canonicalNameRE.MatchString(s) {
		return errs.InvalidField(field, "%s must start with a letter and hold only letters, digits and '_' (at most %d)", field, maxJulepCanonicalName)
	}
	return nil
}

// checkJSONObject refuses a JSON value that is not an object (null and absent pass) or is over the size limit.
func checkJSONObject(field string, raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	if len(t) > maxJulepJSON {
		return errs.InvalidField(field, "%s is %d bytes of JSON; at most %d are allowed", field, len(t), maxJulepJSON)
	}
	if t[0] != '{' || !json.Valid(t) {
		return errs.InvalidField(field, "%s must be a JSON object", field)
	}
	return nil
}

// checkInstructions checks an agent's instructions: a string, or a list of at most 100 strings.
func checkInstructions(raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	var one string
	if json.Unmarshal(t, &one) == nil {
		return checkText("instructions", one, maxJulepInstruction)
	}
	var many []string
	if err := json.Unmarshal(t, &many); err != nil {
		return errs.InvalidField("instructions", "instructions must be a string or a list of strings")
	}
	if err := checkCount("instructions", len(many), maxJulepInstructions); err != nil {
		return err
	}
	total := 0
	for i, s := range many {
		if err := checkText(fmt.Sprintf("instructions[%d]", i), s, maxJulepInstruction); err != nil {
			return err
		}
		total += utf8.RuneCountInString(s)
	}
	if total > maxJulepInstruction {
		return errs.InvalidField("instructions", "the instructions hold %d characters together; at most %d are allowed", total, maxJulepInstruction)
	}
	return nil
}

// checkTemplate checks a Jinja template the way it will be rendered: it must compile.
func checkTemplate(field, src string) error {
	if _, err := jinja.Compile(field, src); err != nil {
		if e := errs.As(err); e != nil {
			return errs.InvalidField(field, "%s", e.Message)
		}
		return errs.InvalidField(field, "%s does not compile: %v", field, err)
	}
	return nil
}

// checkRange refuses a number outside [lo, hi] (or NaN).
func checkRange(field string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return errs.InvalidField(field, "%s must be between %v and %v, got %v", field, lo, hi, v)
	}
	return nil
}
