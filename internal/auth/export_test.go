package auth

import (
	"context"

	"github.com/golang-jwt/jwt/v5"
)

// SignWithCurrentKey signs arbitrary claims with the signer's current key, so that tests can show which claims
// Verify insists on beyond a good signature.
func SignWithCurrentKey(ctx context.Context, s *Signer, claims jwt.Claims) (string, error) {
	set, err := s.load(ctx)
	if err != nil {
		return "", err
	}
	key := set.keys[set.current]
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = key.kid
	return tok.SignedString(key.private)
}

// PrivateSeeds returns the seeds of every key the signer holds, so that tests can look for them where they must
// not be.
func PrivateSeeds(ctx context.Context, s *Signer) ([][]byte, error) {
	set, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, k := range set.keys {
		out = append(out, k.private.Seed())
	}
	return out, nil
}
