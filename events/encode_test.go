package events

import (
	"bytes"
	"encoding/json"
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
		got, err := encodeEnvelope(&env)
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
		_, _ = encodeEnvelope(&env)
	}
}
