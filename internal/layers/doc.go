// Package layers holds no code: its test is the rule of what may import what that docs/architecture.md states
// ("What may import what"), checked against `go list` on every `make test`.
package layers
