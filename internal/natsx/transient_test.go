package natsx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
)

// TestTransientTellsAFailoverFromARefusal checks which errors a write sends again: those of a stream between
// leaders or a connection between servers, wrapped or not, and never a refusal the server meant.
func TestTransientTellsAFailoverFromARefusal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nats.ErrTimeout, true},
		{nats.ErrNoResponders, true},
		{jetstream.ErrNoStreamResponse, true},
		{context.DeadlineExceeded, true},
		{nats.ErrConnectionReconnecting, true},
		{fmt.Errorf("append thread.created: %w", nats.ErrDisconnected), true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{nats.ErrMaxPayload, false},
		{context.Canceled, false},
		{errors.New("bad input"), false},
	} {
		if got := natsx.Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
