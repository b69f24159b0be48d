package events

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// EncodeEnvelope writes an envelope's JSON by hand. It is on every append's path, and encoding/json would marshal
// the envelope by reflection and then re-validate and compact the already-encoded payload. The output is the JSON
// encoding/json produces for Envelope (a test holds the two together).
func EncodeEnvelope(env *Envelope) ([]byte, error) {
	b := make([]byte, 0, 256+len(env.Data))
	b = append(b, `{"id":`...)
	b = appendString(b, env.ID)
	b = append(b, `,"type":`...)
	b = appendString(b, env.Type)
	b = append(b, `,"aggregate":`...)
	b = appendString(b, env.Aggregate)
	b = append(b, `,"aggregate_id":`...)
	b = appendString(b, env.AggregateID)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, env.Version, 10)
	b = append(b, `,"time":"`...)
	b = env.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	for _, f := range [...]struct{ name, value string }{
		{`,"account":`, env.Account},
		{`,"actor":`, env.Actor},
		{`,"correlation_id":`, env.CorrelationID},
		{`,"causation_id":`, env.CausationID},
	} {
		if f.value != "" {
			b = append(b, f.name...)
			b = appendString(b, f.value)
		}
	}
	b = append(b, `,"data":`...)
	if len(env.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, env.Data...) // already JSON: it came from json.Marshal of the typed event
	}
	return append(b, '}'), nil
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string, escaping as encoding/json does (including <, > and & as \u003c...,
// and invalid UTF-8 as \ufffd).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
