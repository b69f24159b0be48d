package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// SigningBucket is the KV bucket (without the deployment prefix) that holds the agent-token key set. Every node
// reads the same set, so a token signed on one node verifies on all of them and after a restart.
const SigningBucket = "signing_keys"

// SigningBucketSpec is how the platform provisions SigningBucket.
func SigningBucketSpec() natsx.BucketSpec {
	return natsx.BucketSpec{Name: SigningBucket, Description: "Ed25519 key set that signs the tokens agents receive"}
}

// FixieAudience is the first of the audiences agents built with the Fixie SDK accept (its constants.py lists
// FIXIE_AGENT_API_AUDIENCES; PyJWT accepts a token whose "aud" list holds any of them). The platform puts it in
// every token next to its own URL (SignerConfig.Audiences), so such an agent works without being told about it.
const FixieAudience = "https://app.fixie.ai/api"

// DefaultTokenLifetime is how long an agent token is valid. Agents receive a fresh one with every call, so it only
// needs to outlast one query; short lifetimes also bound how long a retired key stays published.
const DefaultTokenLifetime = 15 * time.Minute

// keySetKey is the one document of SigningBucket: the whole set changes by compare-and-set, so two nodes that
// start or rotate at the same moment agree on one result.
const keySetKey = "keyset"

// leeway absorbs clock differences between the node that signs a token and the one that verifies it.
const leeway = 30 * time.Second

// AgentClaims say on whose behalf the platform calls an agent. The field names match agentproto.Claims, so
// that a conversion between the two is a plain type conversion.
type AgentClaims struct {
	// User is the account the call is made for (claim "sub"); empty means anonymous.
	User string
	// AgentID is the agent the token is meant for, by its Contrail ID (claim "agt"), which stays the same when the
	// agent is renamed. The platform knows an agent calling back by it.
	AgentID string
	// AgentName is the agent as Fixie named it, "<username>/<handle>" (claim "aid"): the Fixie SDK checks it
	// against FIXIE_ALLOWED_AGENT_ID. Empty means AgentID.
	AgentName string
	// SessionID is the session the call belongs to, if any (claim "sid").
	SessionID string
	// Audience is who the token is for (claim "aud", next to SignerConfig.Audiences): the platform's own URL unless
	// the agent was registered with another. Empty means the signer's default.
	Audience string
}

// SignerConfig wires a Signer.
type SignerConfig struct {
	// KV is the SigningBucket of the deployment.
	KV jetstream.KeyValue
	// Secret, when not empty, seals the private keys at rest (AES-256-GCM under a key derived from it with HKDF).
	// Every node must be given the same secret. Empty stores them unsealed; see OpenSigner.
	Secret string
	// Audience is the default audience of tokens and what Verify expects when given none: the platform's URL.
	Audience string
	// Audiences are put in every token's "aud" next to its own audience: FixieAudience, for agents built with the
	// Fixie SDK.
	Audiences []string
	// Issuer is the "iss" of tokens (default: Audience).
	Issuer string
	// Lifetime of a token (default DefaultTokenLifetime).
	Lifetime time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// Signer issues and verifies the Ed25519 JWTs the platform gives agents, and publishes its public keys.
//
// The key set holds a current key (signs), a next key (published ahead of use, so that an agent that refreshed
// its JWKS since the last rotation already knows the key that signs after the next one) and retired keys, which
// stay published until every token they signed has expired.
type Signer struct {
	cfg  SignerConfig
	seal *sealer // nil when keys are stored unsealed

	mu   sync.Mutex
	set  *keySet
	seen map[string]ed25519.PublicKey // every key ever loaded: a kid's public key never changes
}

// signingKey is one key of the set, unsealed.
type signingKey struct {
	kid       string
	public    ed25519.PublicKey
	private   ed25519.PrivateKey
	retiredAt time.Time // zero while current or next
}

// keySet is the set as one revision of the bucket holds it.
type keySet struct {
	rev     uint64
	current string
	next    string
	keys    map[string]*signingKey
	order   []string // kids in the order the document lists them
}

// storedKeySet is the document in the bucket. Its JSON is a contract with every node of a deployment.
type storedKeySet struct {
	Current string `json:"current"`
	Next    string `json:"next"`
	// Salt is the HKDF salt of the sealing key; it exists from the first seal on.
	Salt string      `json:"salt,omitempty"`
	Keys []storedKey `json:"keys"`
}

type storedKey struct {
	Kid string `json:"kid"`
	// Public is the raw Ed25519 public key, base64url.
	Public string `json:"public"`
	// Private is the 32-byte seed, base64; or, when Sealed, nonce||ciphertext of the seed, base64.
	Private   string     `json:"private"`
	Sealed    bool       `json:"sealed,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RetiredAt *time.Time `json:"retired_at,omitempty"`
}

// OpenSigner loads the deployment's key set, creating it when no node has yet. Creation uses KV Create, so two
// nodes that start together agree on one set.
//
// Sealing: with cfg.Secret the private keys are stored sealed, and a set stored unsealed is sealed on the spot. Without
// one they are stored as they are, because nodes share nothing but NATS: a key derived from something on one
// node's disk would leave every other node unable to sign, and on a single node that disk also holds the NATS store,
// so it would protect nothing. Whoever can read the bucket can also read and write the whole event log; the
// secret adds protection for NATS backups and read-only NATS users. A set sealed with a secret this node does
// not have is an error naming the setting.
func OpenSigner(ctx context.Context, cfg SignerConfig) (*Signer, error) {
	if cfg.KV == nil {
		return nil, errors.New("signer: no KV bucket")
	}
	if cfg.Audience == "" {
		return nil, errors.New("signer: no default audience (the platform's public URL)")
	}
	if cfg.Issuer == "" {
		cfg.Issuer = cfg.Audience
	}
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultTokenLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Signer{cfg: cfg, seen: map[string]ed25519.PublicKey{}}
	if cfg.Secret != "" {
		s.seal = &sealer{secret: []byte(cfg.Secret)}
	}
	for attempt := 0; attempt < 10; attempt++ {
		entry, err := cfg.KV.Get(ctx, keySetKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if err := s.create(ctx); err != nil {
				return nil, err
			}
			continue // read back what won: ours or another node's
		}
		if err != nil {
			return nil, fmt.Errorf("signer: read key set: %w", err)
		}
		var doc storedKeySet
		if err := json.Unmarshal(entry.Value(), &doc); err != nil {
			return nil, fmt.Errorf("signer: decode key set: %w", err)
		}
		if s.seal != nil && doc.hasUnsealed() {
			if err := s.sealStored(ctx, doc, entry.Revision()); err != nil {
				if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
					continue
				}
				return nil, err
			}
			cfg.Logger.Info("sealed the agent-token signing keys with CONTRAIL_SIGNING_SECRET")
			continue
		}
		if _, err := s.decode(entry.Revision(), doc); err != nil {
			return nil, err
		}
		if s.seal == nil {
			cfg.Logger.Info("agent-token signing keys are stored unsealed in NATS KV; set CONTRAIL_SIGNING_SECRET on every node to seal them")
		}
		return s, nil
	}
	return nil, errors.New("signer: the key set kept changing while this node opened it")
}

// create stores a fresh set unless one exists.
func (s *Signer) create(ctx context.Context) error {
	now := s.cfg.Now().UTC()
	current, err := newStoredKey(now)
	if err != nil {
		return err
	}
	next, err := newStoredKey(now)
	if err != nil {
		return err
	}
	doc := storedKeySet{Current: current.Kid, Next: next.Kid, Keys: []storedKey{current, next}}
	if s.seal != nil {
		if doc, err = s.sealAll(doc); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("signer: encode key set: %w", err)
	}
	if _, err := s.cfg.KV.Create(ctx, keySetKey, raw); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("signer: store new key set: %w", err)
	}
	return nil
}

func (s *Signer) sealStored(ctx context.Context, doc storedKeySet, rev uint64) error {
	sealed, err := s.sealAll(doc)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(sealed)
	if err != nil {
		return fmt.Errorf("signer: encode key set: %w", err)
	}
	if _, err := s.cfg.KV.Update(ctx, keySetKey, raw, rev); err != nil {
		return fmt.Errorf("signer: seal key set: %w", err)
	}
	return nil
}

func (d storedKeySet) hasUnsealed() bool {
	return slices.ContainsFunc(d.Keys, func(k storedKey) bool { return !k.Sealed })
}

// sealAll seals every unsealed key of doc.
func (s *Signer) sealAll(doc storedKeySet) (storedKeySet, error) {
	if doc.Salt == "" {
		salt := make([]byte, 16)
		_, _ = rand.Read(salt)
		doc.Salt = base64.StdEncoding.EncodeToString(salt)
	}
	keys := slices.Clone(doc.Keys)
	for i, k := range keys {
		if k.Sealed {
			continue
		}
		seed, err := base64.StdEncoding.DecodeString(k.Private)
		if err != nil {
			return doc, fmt.Errorf("signer: key %s: decode private key: %w", k.Kid, err)
		}
		box, err := s.seal.seal(doc.Salt, k.Kid, seed)
		if err != nil {
			return doc, err
		}
		keys[i].Private, keys[i].Sealed = box, true
	}
	doc.Keys = keys
	return doc, nil
}

func newStoredKey(now time.Time) (storedKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return storedKey{}, fmt.Errorf("signer: generate key: %w", err)
	}
	return storedKey{
		Kid:       thumbprint(pub),
		Public:    base64.RawURLEncoding.EncodeToString(pub),
		Private:   base64.StdEncoding.EncodeToString(priv.Seed()),
		CreatedAt: now,
	}, nil
}

// thumbprint is the key's RFC 7638 JWK thumbprint, used as its kid: derived from the key, so it is the same on
// every node and cannot name two keys.
func thumbprint(pub ed25519.PublicKey) string {
	canonical := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// decode unseals a stored set and makes it the cached one.
func (s *Signer) decode(rev uint64, doc storedKeySet) (*keySet, error) {
	set := &keySet{rev: rev, current: doc.Current, next: doc.Next, keys: map[string]*signingKey{}}
	for _, k := range doc.Keys {
		pub, err := base64.RawURLEncoding.DecodeString(k.Public)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("signer: key %s: bad public key", k.Kid)
		}
		var seed []byte
		switch {
		case k.Sealed && s.seal == nil:
			return nil, errors.New("signer: the agent-token signing keys in NATS are sealed; set CONTRAIL_SIGNING_SECRET to the secret the other nodes use")
		case k.Sealed:
			if seed, err = s.seal.open(doc.Salt, k.Kid, k.Private); err != nil {
				return nil, err
			}
		default:
			if seed, err = base64.StdEncoding.DecodeString(k.Private); err != nil {
				return nil, fmt.Errorf("signer: key %s: decode private key: %w", k.Kid, err)
			}
		}
		if len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("signer: key %s: private key has %d bytes", k.Kid, len(seed))
		}
		priv := ed25519.NewKeyFromSeed(seed)
		if !priv.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(pub)) {
			return nil, fmt.Errorf("signer: key %s: private and public keys do not match", k.Kid)
		}
		sk := &signingKey{kid: k.Kid, public: pub, private: priv}
		if k.RetiredAt != nil {
			sk.retiredAt = *k.RetiredAt
		}
		set.keys[k.Kid] = sk
		set.order = append(set.order, k.Kid)
	}
	if set.keys[set.current] == nil || set.keys[set.next] == nil {
		return nil, errors.New("signer: the key set names a current or next key it does not hold")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil || rev >= s.set.rev {
		s.set = set
	}
	for kid, k := range set.keys {
		s.seen[kid] = k.public
	}
	return set, nil
}

// load returns the set the bucket holds now; it unseals only when the revision changed.
func (s *Signer) load(ctx context.Context) (*keySet, error) {
	entry, err := s.cfg.KV.Get(ctx, keySetKey)
	if err != nil {
		return nil, fmt.Errorf("signer: read key set: %w", err)
	}
	s.mu.Lock()
	cached := s.set
	s.mu.Unlock()
	if cached != nil && cached.rev == entry.Revision() {
		return cached, nil
	}
	var doc storedKeySet
	if err := json.Unmarshal(entry.Value(), &doc); err != nil {
		return nil, fmt.Errorf("signer: decode key set: %w", err)
	}
	return s.decode(entry.Revision(), doc)
}

// tokenClaims is the JWT payload: sub, aud, iat, exp, jti (and iss), plus the agent ("aid" as Fixie named it,
// "agt" by its Contrail ID) and session ("sid"). Tokens signed before "agt" existed name the agent in "aid" only.
type tokenClaims struct {
	AgentName string `json:"aid"`
	AgentID   string `json:"agt,omitempty"`
	SessionID string `json:"sid,omitempty"`
	jwt.RegisteredClaims
}

// Audience is the default audience of tokens: the platform's own URL.
func (s *Signer) Audience() string { return s.cfg.Audience }

// Lifetime is how long a token stays valid.
func (s *Signer) Lifetime() time.Duration { return s.cfg.Lifetime }

// AgentToken signs a token for a call to an agent with the current key. It reads the key set first (one KV
// read), so a rotation made on another node is followed at once.
func (s *Signer) AgentToken(ctx context.Context, c AgentClaims) (string, error) {
	if c.AgentID == "" {
		return "", errs.Missing("agent_id")
	}
	aud := jwt.ClaimStrings{c.Audience}
	if c.Audience == "" {
		aud[0] = s.cfg.Audience
	}
	for _, a := range s.cfg.Audiences {
		if !slices.Contains(aud, a) {
			aud = append(aud, a)
		}
	}
	name := c.AgentName
	if name == "" {
		name = c.AgentID
	}
	set, err := s.load(ctx)
	if err != nil {
		return "", err
	}
	key := set.keys[set.current]
	now := s.cfg.Now()
	claims := tokenClaims{
		AgentName: name,
		AgentID:   c.AgentID,
		SessionID: c.SessionID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.cfg.Issuer,
			Subject:   c.User,
			Audience:  aud,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.cfg.Lifetime)),
			ID:        events.RandomToken(16),
		},
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = key.kid
	signed, err := tok.SignedString(key.private)
	if err != nil {
		return "", fmt.Errorf("sign agent token: %w", err)
	}
	return signed, nil
}

// Verify checks a token the platform issued: EdDSA only, signed by a key of the set (named by its kid), not
// expired, meant for one of audiences (default: the signer's audience) and naming an agent. Every failure is an
// errs.Unauthorized error saying why, without the token.
func (s *Signer) Verify(ctx context.Context, token string, audiences ...string) (AgentClaims, error) {
	if len(audiences) == 0 {
		audiences = []string{s.cfg.Audience}
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(audiences...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(s.cfg.Now),
	)
	var claims tokenClaims
	_, err := parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New(`the token names no key ("kid")`)
		}
		return s.publicKey(ctx, kid)
	})
	if err != nil {
		return AgentClaims{}, errs.E(errs.Unauthorized, "invalid agent token: %s", strings.TrimPrefix(err.Error(), "token is unverifiable: "))
	}
	if claims.AgentName == "" {
		return AgentClaims{}, errs.E(errs.Unauthorized, `invalid agent token: it names no agent ("aid")`)
	}
	if claims.AgentID == "" {
		claims.AgentID = claims.AgentName
	}
	aud := ""
	for _, a := range claims.Audience {
		if slices.Contains(audiences, a) {
			aud = a
			break
		}
	}
	return AgentClaims{User: claims.Subject, AgentID: claims.AgentID, AgentName: claims.AgentName,
		SessionID: claims.SessionID, Audience: aud}, nil
}

// publicKey finds a kid among the keys seen, reading the set again when it is new (a rotation on another node).
func (s *Signer) publicKey(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	s.mu.Lock()
	k, ok := s.seen[kid]
	s.mu.Unlock()
	if ok {
		return k, nil
	}
	set, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	if key := set.keys[kid]; key != nil {
		return key.public, nil
	}
	return nil, fmt.Errorf("unknown signing key %q", kid)
}

// JWK is one public key as RFC 8037 writes Ed25519 keys.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKS is what /.well-known/jwks.json answers.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS returns the keys agents must know: the current one, the next one, and retired ones whose tokens may not
// have expired yet.
func (s *Signer) JWKS(ctx context.Context) (JWKS, error) {
	set, err := s.load(ctx)
	if err != nil {
		return JWKS{}, err
	}
	now := s.cfg.Now()
	out := JWKS{Keys: []JWK{}}
	for _, kid := range set.order {
		k := set.keys[kid]
		if !k.retiredAt.IsZero() && now.After(k.retiredAt.Add(s.cfg.Lifetime+leeway)) {
			continue
		}
		out.Keys = append(out.Keys, JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.public),
			Kid: kid, Use: "sig", Alg: jwt.SigningMethodEdDSA.Alg()})
	}
	return out, nil
}

// Rotation is what a rotation did.
type Rotation struct {
	// Current is the key that signs from now on; it was published as the next key since the last rotation.
	Current string `json:"current"`
	// Retired is the key that signed until now; it stays published until its tokens have expired.
	Retired string `json:"retired"`
	// RetiredUntil is when Retired leaves the JWKS.
	RetiredUntil time.Time `json:"retired_until"`
	// Next is the new key published ahead of the next rotation.
	Next string `json:"next"`
}

// Rotate makes the next key current, retires the current one and publishes a new next key. Keys retired long
// enough ago that their tokens have all expired are dropped. Concurrent rotations on several nodes each take
// effect once, in turn.
func (s *Signer) Rotate(ctx context.Context) (Rotation, error) {
	for attempt := 0; attempt < 10; attempt++ {
		entry, err := s.cfg.KV.Get(ctx, keySetKey)
		if err != nil {
			return Rotation{}, fmt.Errorf("rotate signing key: read key set: %w", err)
		}
		var doc storedKeySet
		if err := json.Unmarshal(entry.Value(), &doc); err != nil {
			return Rotation{}, fmt.Errorf("rotate signing key: decode key set: %w", err)
		}
		now := s.cfg.Now().UTC()
		next, err := newStoredKey(now)
		if err != nil {
			return Rotation{}, err
		}
		rot := Rotation{Current: doc.Next, Retired: doc.Current, RetiredUntil: now.Add(s.cfg.Lifetime + leeway), Next: next.Kid}
		keys := make([]storedKey, 0, len(doc.Keys)+1)
		for _, k := range doc.Keys {
			if k.Kid == doc.Current {
				at := now
				k.RetiredAt = &at
			}
			if k.RetiredAt != nil && now.After(k.RetiredAt.Add(s.cfg.Lifetime+leeway)) {
				continue
			}
			keys = append(keys, k)
		}
		doc.Keys = append(keys, next)
		doc.Current, doc.Next = rot.Current, rot.Next
		if s.seal != nil {
			if doc, err = s.sealAll(doc); err != nil {
				return Rotation{}, err
			}
		} else if slices.ContainsFunc(doc.Keys, func(k storedKey) bool { return k.Sealed }) {
			return Rotation{}, errors.New("rotate signing key: the key set is sealed and this node has no CONTRAIL_SIGNING_SECRET")
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return Rotation{}, fmt.Errorf("rotate signing key: encode key set: %w", err)
		}
		rev, err := s.cfg.KV.Update(ctx, keySetKey, raw, entry.Revision())
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return Rotation{}, fmt.Errorf("rotate signing key: store key set: %w", err)
		}
		if _, err := s.decode(rev, doc); err != nil {
			return Rotation{}, err
		}
		s.cfg.Logger.Info("rotated the agent-token signing key", "current", rot.Current, "retired", rot.Retired)
		return rot, nil
	}
	return Rotation{}, errors.New("rotate signing key: the key set kept changing")
}
