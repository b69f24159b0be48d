package auth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// leaked reports whether any encoding of any seed appears in raw.
func leaked(raw []byte, seeds [][]byte) bool {
	for _, seed := range seeds {
		for _, form := range [][]byte{seed, []byte(base64.StdEncoding.EncodeToString(seed)),
			[]byte(base64.RawStdEncoding.EncodeToString(seed)), []byte(base64.RawURLEncoding.EncodeToString(seed)),
			[]byte(hex.EncodeToString(seed))} {
			if bytes.Contains(raw, form) {
				return true
			}
		}
	}
	return false
}

func storedKeySet(t *testing.T, kv jetstream.KeyValue) []byte {
	t.Helper()
	e, err := kv.Get(context.Background(), "keyset")
	if err != nil {
		t.Fatal(err)
	}
	return e.Value()
}

func TestSealedKeysNeedTheSameSecretOnEveryNode(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	kv := signingKV(t, srv.JS)
	ctx := context.Background()
	const secret = "correct horse battery staple"
	s := openSigner(t, kv, time.Now, secret)
	seeds, err := auth.PrivateSeeds(ctx, s)
	if err != nil || len(seeds) != 2 {
		t.Fatalf("seeds: %d %v", len(seeds), err)
	}
	if leaked(storedKeySet(t, kv), seeds) {
		t.Fatal("a sealed key set holds a private key in the clear")
	}
	tok, err := s.AgentToken(ctx, auth.AgentClaims{User: "u", AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	other := openSigner(t, kv, time.Now, secret)
	if _, err := other.Verify(ctx, tok); err != nil {
		t.Fatalf("a second node with the same secret: %v", err)
	}
	if _, err := other.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	seeds, _ = auth.PrivateSeeds(ctx, other)
	if leaked(storedKeySet(t, kv), seeds) {
		t.Fatal("the key added by a rotation is stored in the clear")
	}

	for name, wrong := range map[string]string{"another secret": "wrong", "no secret": ""} {
		_, err := auth.OpenSigner(ctx, auth.SignerConfig{KV: kv, Audience: platformURL, Secret: wrong})
		if err == nil || !strings.Contains(err.Error(), "CONTRAIL_SIGNING_SECRET") {
			t.Errorf("%s: open gave %v, want an error naming CONTRAIL_SIGNING_SECRET", name, err)
		}
	}
}

func TestAnUnsealedKeySetIsSealedWhenASecretArrives(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	kv := signingKV(t, srv.JS)
	ctx := context.Background()
	plain := openSigner(t, kv, time.Now, "")
	seeds, _ := auth.PrivateSeeds(ctx, plain)
	if !leaked(storedKeySet(t, kv), seeds) {
		t.Fatal("without a secret the seeds should be stored as they are (the check below would prove nothing)")
	}
	tok, _ := plain.AgentToken(ctx, auth.AgentClaims{User: "u", AgentID: "a"})
	before, _ := plain.JWKS(ctx)

	sealed := openSigner(t, kv, time.Now, "s3cret")
	if leaked(storedKeySet(t, kv), seeds) {
		t.Fatal("opening with a secret left the private keys in the clear")
	}
	if _, err := sealed.Verify(ctx, tok); err != nil {
		t.Fatalf("a token signed before sealing: %v", err)
	}
	after, _ := sealed.JWKS(ctx)
	if len(after.Keys) != len(before.Keys) || after.Keys[0] != before.Keys[0] {
		t.Fatalf("sealing changed the keys: %v then %v", before, after)
	}
}
