// Package auth says who is calling: API keys (random, shown once, stored as SHA-256 hashes and looked up in the
// accounts read model), the principal that travels in a request's context, and the Ed25519 tokens the platform
// signs for agents (Signer: a key set shared by every node through a KV bucket, published as a JWKS, rotated
// without breaking tokens in flight). Authenticator accepts both kinds of bearer credential.
//
// It must not import the faces (httpapi and the packages that implement them).
package auth
