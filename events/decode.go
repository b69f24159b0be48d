package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// decodeEnvelopeFast reads an envelope in the exact form encodeEnvelope writes, field by field in that order, with
// the payload taken as the rest of the object. Every read of the log decodes envelopes (loads, projections,
// subscriptions), and encoding/json scans the payload twice (once to skip it, once to decode it). Anything not in
// that form (older writers, hand-made messages) reports false and goes through encoding/json. The payload is not
// checked here: decodeEnvelope's decoding of it into its event type checks it, and it checks that of a type this
// build does not know.
func decodeEnvelopeFast(b []byte) (Envelope, bool) {
	var env Envelope
	p := parser{b: b}
	if !p.lit(`{"id":`) {
		return env, false
	}
	ok := p.str(&env.ID) && p.lit(`,"type":`) && p.str(&env.Type) && p.lit(`,"aggregate":`) && p.str(&env.Aggregate) &&
		p.lit(`,"aggregate_id":`) && p.str(&env.AggregateID) && p.lit(`,"version":`) && p.uint(&env.Version) &&
		p.lit(`,"time":`) && p.time(&env.Time)
	if !ok {
		return env, false
	}
	for _, f := range [...]struct {
		name string
		dst  *string
	}{{`,"account":`, &env.Account}, {`,"actor":`, &env.Actor}, {`,"correlation_id":`, &env.CorrelationID},
		{`,"causation_id":`, &env.CausationID}} {
		if p.lit(f.name) && !p.str(f.dst) {
			return env, false
		}
	}
	if !p.lit(`,"data":`) {
		return env, false
	}
	rest := p.b[p.i:]
	if len(rest) < 2 || rest[len(rest)-1] != '}' {
		return env, false
	}
	data := rest[:len(rest)-1]
	if !bytes.Equal(data, []byte("null")) {
		env.Data = json.RawMessage(append([]byte(nil), data...))
	}
	return env, true
}

// DecodeEnvelope parses a stored envelope and its payload. An event type this build does not know leaves Event nil
// (it is kept and skipped, not fatal).
func DecodeEnvelope(reg *Registry, data []byte) (Envelope, error) {
	if env, ok := decodeEnvelopeFast(data); ok {
		ev, err := reg.Decode(env.Type, env.Data)
		if err == nil {
			env.Event = ev
			return env, nil
		}
		if errors.Is(err, ErrUnknownType) && json.Valid(env.Data) {
			return env, nil
		}
		// The payload as the fast path cut it is not JSON (or not this type's): encoding/json reads the envelope
		// whole, and says what is wrong.
	}
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return Envelope{}, err
	}
	ev, err := reg.Decode(env.Type, env.Data)
	if err != nil && !errors.Is(err, ErrUnknownType) {
		return Envelope{}, err
	}
	env.Event = ev
	return env, nil
}

type parser struct {
	b []byte
	i int
}

// lit consumes s when the input continues with it.
func (p *parser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a JSON string; one with escapes is unquoted by encoding/json.
func (p *parser) str(dst *string) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	escaped := false
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			raw := p.b[p.i : j+1]
			p.i = j + 1
			if !escaped {
				if !utf8.Valid(raw[1 : len(raw)-1]) {
					return false
				}
				*dst = string(raw[1 : len(raw)-1])
				return true
			}
			return json.Unmarshal(raw, dst) == nil
		case c < 0x20:
			return false
		}
	}
	return false
}

func (p *parser) uint(dst *uint64) bool {
	j := p.i
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	n, err := strconv.ParseUint(string(p.b[p.i:j]), 10, 64)
	if err != nil {
		return false
	}
	*dst, p.i = n, j
	return true
}

func (p *parser) time(dst *time.Time) bool {
	var s string
	if !p.str(&s) {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return false
	}
	*dst = t
	return true
}
