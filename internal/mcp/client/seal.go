package client

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/contrailhq/contrail/internal/sealbox"
)

// Sealer seals the headers of an mcp tool (tokens) for the log, with AES-256-GCM, so that no event holds them in
// clear; the node that runs the tool opens them. A box is bound to the account and the server_url it was sealed
// for (GCM's additional data): one copied into another account's tool, or a tool of another server, does not open,
// so a token given for one server never goes to another.
type Sealer struct{ key *sealbox.Key }

// sealInfo binds the derived key to this one use.
const sealInfo = "contrail mcp headers v1"

// NewSealer derives the sealing key from key material (the deployment's, 32 bytes or more) and, when given, the
// operator's secret.
func NewSealer(material []byte, secret string) (*Sealer, error) {
	key, err := sealbox.New(material, secret, sealInfo)
	if err != nil {
		return nil, fmt.Errorf("mcp headers: %w", err)
	}
	return &Sealer{key: key}, nil
}

// binding is the additional data a box is sealed with: the account and the server's URL, each length-prefixed so
// that no two pairs give the same bytes.
func binding(account, serverURL string) []byte {
	return fmt.Appendf(nil, "%d:%s%d:%s", len(account), account, len(serverURL), serverURL)
}

var errMalformed = errors.New("mcp headers: the sealed headers are malformed")

// ErrSealedElsewhere is Open's error for a box sealed for another account or server_url (or under another
// deployment's key).
var ErrSealedElsewhere = errors.New("mcp headers: the sealed headers were not sealed for this account and server_url, or not with this deployment's key")

// Seal returns the headers sealed for account's tool of serverURL: base64(nonce || ciphertext).
func (s *Sealer) Seal(headers map[string]string, account, serverURL string) (string, error) {
	plain, err := json.Marshal(headers)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(s.key.Seal(plain, binding(account, serverURL))), nil
}

// Open reverses Seal for the account and serverURL the box was sealed for (ErrSealedElsewhere otherwise); ""
// opens to no headers.
func (s *Sealer) Open(box, account, serverURL string) (map[string]string, error) {
	if box == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(box)
	if err != nil {
		return nil, errMalformed
	}
	plain, err := s.key.Open(raw, binding(account, serverURL))
	if errors.Is(err, sealbox.ErrMalformed) {
		return nil, errMalformed
	}
	if err != nil {
		return nil, ErrSealedElsewhere
	}
	var h map[string]string
	if err := json.Unmarshal(plain, &h); err != nil {
		return nil, fmt.Errorf("mcp headers: %w", err)
	}
	return h, nil
}
