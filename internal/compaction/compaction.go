// Package compaction seals and opens the summaries of POST /v1/responses/compact: a compaction item's
// encrypted_content is a summary only this deployment can read, bound to the account it was made for, so that a
// client can carry it back in a later request's input but cannot read it, forge one, or use another account's.
package compaction

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/internal/sealbox"
)

// sealInfo binds the derived key to this one use, apart from any other key derived from the same material.
const sealInfo = "contrail response compaction v1"

// prefix starts every sealed summary, so that a box of another kind (or of a later version) is told apart at once.
const prefix = "ctc1."

// MaxSummary bounds a summary's text, as an input item's text is bounded.
const MaxSummary = 1 << 20

// ErrNotOurs is Open's error for content that is not a summary this deployment sealed for the account: malformed,
// altered, sealed for another account, or under another deployment's key. The three are not told apart, so that
// nothing about another account's content is learnt from the answer.
var ErrNotOurs = errors.New("the compaction item's encrypted_content was not made by this platform's /v1/responses/compact for this account")

// Sealer seals and opens summaries; the account is what a box is bound to.
type Sealer struct{ key *sealbox.Key }

// NewSealer derives the key from key material (the deployment's, 32 bytes or more) and, when given, the
// operator's secret.
func NewSealer(material []byte, secret string) (*Sealer, error) {
	key, err := sealbox.New(material, secret, sealInfo)
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	return &Sealer{key: key}, nil
}

// Summary is what a compaction item carries.
type Summary struct {
	// Text is the model's summary of the context compacted.
	Text string `json:"text"`
	// Model is the model that wrote it, CreatedAt when (Unix seconds): for the log and a reader of the input items.
	Model     string `json:"model"`
	CreatedAt int64  `json:"created_at"`
}

func binding(account string) []byte { return []byte("account:" + account) }

// Seal returns the summary sealed for account: "ctc1." and base64url(nonce || ciphertext of its JSON).
func (s *Sealer) Seal(account string, sum Summary) (string, error) {
	plain, err := json.Marshal(sum)
	if err != nil {
		return "", fmt.Errorf("compaction: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(s.key.Seal(plain, binding(account))), nil
}

// Open reverses Seal for the account the summary was sealed for; anything else is ErrNotOurs.
func (s *Sealer) Open(account, box string) (Summary, error) {
	var sum Summary
	rest, ok := strings.CutPrefix(box, prefix)
	if !ok {
		return sum, ErrNotOurs
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return sum, ErrNotOurs
	}
	plain, err := s.key.Open(raw, binding(account))
	if err != nil {
		return sum, ErrNotOurs
	}
	if err := json.Unmarshal(plain, &sum); err != nil || sum.Text == "" {
		return sum, ErrNotOurs
	}
	return sum, nil
}
