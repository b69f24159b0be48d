// Package console serves the web console at / : a public page (static assets embedded in the binary, no request
// to anywhere but this node) that signs in with an API key the user types and calls the faces with it — GraphQL
// for chat, timelines and agents, /v1 for assistants, /admin for operations.
//
// The front end lives in web/ (Preact and htm, bundled by esbuild from web/package-lock.json): `make console`
// rebuilds dist/ and assets.sum, and both are committed, so `go build` alone gives a working console.
// TestAssetsAreCurrent fails when a source changed without a rebuild, or dist/ was edited by hand.
//
// It imports no face and no part of the platform: it only serves files.
package console
