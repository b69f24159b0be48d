package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func TestEncodeEnvelopeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `quote " and \ backslash`, "new\nline\ttab\r", "<tag>&amp;", "ünïcødé ✓ 🚀",
		"\u2028\u2029", "ctrl \x01\x1f", "bad utf8 \xff\xfe end"}
	for _, s := range strs {
		env := Envelope{ID: "01J" + s, Type: "x.y", Aggregate: s, AggregateID: "id", Version: 7,
			Time: time.Date(2026, 11, 21, 10, 4, 5, 123456789, time.UTC), Account: s, Actor: s, CorrelationID: s,
			CausationID: s, Data: json.RawMessage(`{"text":"hi"}`)}
		got, err := EncodeEnvelope(&env)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&env)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("for %q:\n got %s\nwant %s", s, got, want)
		}
	}
}

func BenchmarkEncodeEnvelope(b *testing.B) {
	env := Envelope{ID: NewID(), Type: "session.message_posted", Aggregate: "session", AggregateID: NewID(), Version: 3,
		Time: time.Now(), Account: "acct_1", Actor: "key_1", Data: json.RawMessage(`{"text":"hello there, how are you?"}`)}
	for b.Loop() {
		_, _ = EncodeEnvelope(&env)
	}
}

func TestFastDecodeReadsWhatEncodeWrites(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `quote " and \ backslash`, "new\nline\ttab", "<tag>&amp;", "ünïcødé ✓ 🚀", "\u2028"}
	for _, s := range strs {
		env := Envelope{ID: "01J" + s, Type: "x.y", Aggregate: s, AggregateID: "id", Version: 42,
			Time: time.Date(2026, 11, 21, 10, 4, 5, 120000000, time.UTC), Account: s, Actor: s, CorrelationID: s,
			CausationID: s, Data: json.RawMessage(`{"text":"hi \"there\"","n":[1,2]}`)}
		if s == "" {
			env.Account, env.Actor, env.CorrelationID, env.CausationID = "", "", "", ""
		}
		b, _ := EncodeEnvelope(&env)
		fast, ok := decodeEnvelopeFast(b)
		if !ok {
			t.Fatalf("fast decode refused %s", b)
		}
		var slow Envelope
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatal(err)
		}
		if !fast.Time.Equal(slow.Time) {
			t.Fatalf("time %v vs %v", fast.Time, slow.Time)
		}
		fast.Time, slow.Time = time.Time{}, time.Time{}
		if fmt.Sprintf("%+v", fast) != fmt.Sprintf("%+v", slow) {
			t.Fatalf("fast %+v\nslow %+v", fast, slow)
		}
	}
	// Not our form: the fast path declines, encoding/json reads it.
	for _, b := range []string{`{"type":"x.y","id":"a","data":{}}`, `{"id":"a"`} {
		if _, ok := decodeEnvelopeFast([]byte(b)); ok {
			t.Fatalf("fast decode accepted %s", b)
		}
	}
}

type decodedEvent struct {
	Text string `json:"text"`
}

func (decodedEvent) EventType() string { return "test.decoded" }

// A payload that is not JSON is refused, whether its type is known (decoding it checks it) or not; an envelope
// the fast path cuts wrong is read by encoding/json.
func TestDecodeRefusesAPayloadThatIsNotJSON(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	reg.Register(decodedEvent{})
	const head = `{"id":"a","type":%q,"aggregate":"x","aggregate_id":"i","version":1,"time":"2026-11-21T10:04:05Z","data":%s}`
	for _, typ := range []string{decodedEvent{}.EventType(), "x.unknown"} {
		for _, data := range []string{`{"broken":}`, `{"text":"open`, `{} {}`} {
			if _, err := DecodeEnvelope(reg, fmt.Appendf(nil, head, typ, data)); err == nil {
				t.Errorf("type %s, payload %s: decoded", typ, data)
			}
		}
		env, err := DecodeEnvelope(reg, fmt.Appendf(nil, head, typ, `{"text":"fine"}`))
		if err != nil || string(env.Data) != `{"text":"fine"}` {
			t.Errorf("type %s, a good payload: %+v, %v", typ, env, err)
		}
		// A field after the payload is not the fast path's form; encoding/json reads it.
		late := `{"id":"a","type":"` + typ + `","aggregate":"x","aggregate_id":"i","version":1,"time":"2026-11-21T10:04:05Z","data":{"text":"fine"},"later":1}`
		if env, err := DecodeEnvelope(reg, []byte(late)); err != nil || string(env.Data) != `{"text":"fine"}` {
			t.Errorf("type %s, a field after the payload: %+v, %v", typ, env, err)
		}
	}
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	reg := NewRegistry()
	reg.Register(decodedEvent{})
	env := Envelope{ID: NewID(), Type: "test.decoded", Aggregate: "session", AggregateID: NewID(), Version: 3,
		Time: time.Now().UTC(), Account: "acct_1", Actor: "key_1", Data: json.RawMessage(`{"text":"hello there, how are you?"}`)}
	raw, _ := EncodeEnvelope(&env)
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeEnvelope(reg, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			var e Envelope
			_ = json.Unmarshal(raw, &e)
			_, _ = reg.Decode(e.Type, e.Data)
		}
	})
}
