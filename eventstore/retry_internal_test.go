package eventstore

import (
	"context"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
)

// TestAnAppendWhoseEarlierAttemptIsInProcessIsAskedAgain: a clustered leader answers "duplicate message id is in
// process" to a retried publish while the first attempt, sent before an election, is proposed but not applied. The
// append asks again rather than failing (a cluster run's request once ended in a 500 on it), and takes the answer
// that follows, as the server gives it once the first attempt is applied.
func TestAnAppendWhoseEarlierAttemptIsInProcessIsAskedAgain(t *testing.T) {
	s := &Store{logger: slog.New(slog.DiscardHandler)}
	env := &events.Envelope{ID: "evt1", Aggregate: "thread", Type: "thread.created"}
	inProcess := &jetstream.APIError{Code: 409, ErrorCode: errCodeMsgIDInProcess, Description: "duplicate message id is in process"}
	attempts := 0
	seq, err := s.retrying(context.Background(), env, 10, "subject", func(context.Context) (uint64, error) {
		attempts++
		if attempts < 3 {
			return 0, inProcess
		}
		return 42, nil
	})
	if err != nil {
		t.Fatalf("append failed on an attempt in process: %v", err)
	}
	if seq != 42 || attempts != 3 {
		t.Fatalf("seq %d after %d attempts, want 42 after 3", seq, attempts)
	}

	// Another refusal is still answered at once.
	attempts = 0
	other := &jetstream.APIError{Code: 400, ErrorCode: 10999, Description: "something else"}
	if _, err := s.retrying(context.Background(), env, 10, "subject", func(context.Context) (uint64, error) {
		attempts++
		return 0, other
	}); err == nil || attempts != 1 {
		t.Fatalf("another refusal: err %v after %d attempts, want it at once", err, attempts)
	}
}
